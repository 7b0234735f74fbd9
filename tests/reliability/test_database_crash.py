"""Kill -9 the PostgreSQL server mid-load, then restart it.

While it is down, every answer is a 503 (JSON under /api/, a plain page in the console),
never a 500, a traceback or a dropped connection. Once it is back the app recovers by
itself; every write acknowledged before the crash is there, no version chain is half
written, the ledger has no gap or fork, and `verify_ledger` passes.

The choreography: load for WARMUP seconds; SIGKILL the postmaster and all its children
while requests are in flight; hold the clients' next requests and let each get its answer
to the one in flight; probe /health, a console page, a console login, a read-back, a
remember and a turn; let the load run for OUTAGE_LOAD seconds more, every answer a 503;
restart the server; resume the load and wait for /health to answer
200 again, with no manual step. (Holding the load keeps the outage short: each request
then waits DB_POOL_TIMEOUT for a connection, and the workers' request threads
queue the rest.)
"""

import json
import threading
import time

import pytest

from .conftest import ADMIN_PASSWORD, ADMINS
from .harness import (
    Api,
    ConsoleSession,
    chain_problems,
    forget_problems,
    get,
    ledger_problems,
    wait_until,
)
from .load import LoadClient, summarise, verify_keys

pytestmark = pytest.mark.reliability

CLIENTS = 6
ACTORS = 3
KEYS_PER_CLIENT = 4
WARMUP = 8.0  # seconds of load before the crash
AFTER = 5.0  # seconds of load after the app answers /health again
# A request waits up to DB_POOL_TIMEOUT (10 s by default) for a connection before its 503,
# and the two workers take two requests each at a time: bounds are generous.
ANSWER_BOUND = 120.0
RECOVERY_BOUND = 120.0  # the app must answer /health 200 this long after the restart
# An answer this long after the kill cannot come from database work done before it.
SETTLE = 1.0
# Seconds of load sent while the database is down, after the probes.
OUTAGE_LOAD = 2.0


def is_json_503(resp_or_sample) -> bool:
    if resp_or_sample.status != 503:
        return False
    if not resp_or_sample.content_type.startswith("application/json"):
        return False
    try:
        document = json.loads(resp_or_sample.body)
    except ValueError:
        return False
    return isinstance(document, dict) and bool(document.get("detail") or document.get("status"))


PROBES = ("health", "console page", "api remember", "api read-back", "console login", "api turn")


def probe_outage(
    port: int, api: Api, console: ConsoleSession, visitor: ConsoleSession
) -> list[tuple[str, object]]:
    """The PROBES while the database is down, two at a time (one per worker). `visitor` has
    the login page's CSRF cookie and logs in now."""
    probes = {
        "health": lambda: get(port, "/api/v1/health", timeout=ANSWER_BOUND),
        "console page": lambda: console.get("/scopes/"),
        "api remember": lambda: api.remember("crash-probe", "probe", "written while down"),
        "api read-back": lambda: api.read_back("crash-0"),
        "console login": lambda: visitor.post(
            "/login/", {"username": ADMINS[1], "password": ADMIN_PASSWORD, "next": "/"}
        ),
        "api turn": lambda: api.turn("crash-0", "probe-run"),
    }
    answers: list[tuple[str, object]] = []

    def run(names):
        for name in names:
            answers.append((name, probes[name]()))

    lanes = [
        threading.Thread(target=run, args=(PROBES[0::2],), daemon=True),
        threading.Thread(target=run, args=(PROBES[1::2],), daemon=True),
    ]
    for lane in lanes:
        lane.start()
    for lane in lanes:
        lane.join(2 * ANSWER_BOUND + 10)
    return answers


def probe_problem(name: str, resp) -> str | None:
    if resp.status is None:
        return f"{name}: no answer ({resp.error})"
    if b"Traceback" in resp.body:
        return f"{name}: a traceback in the answer"
    if name == "health":
        ok = resp.status == 503 and json.loads(resp.body).get("database") == "unreachable"
    elif name.startswith("console"):
        ok = resp.status == 503 and resp.content_type.startswith("text/html")
    else:
        ok = is_json_503(resp)
    return None if ok else f"{name}: {resp.status} {resp.content_type} {resp.body[:200]!r}"


def test_database_killed_mid_load(healthy, seeded, private_pg, figures):
    port = healthy.port
    api = Api(port, seeded["keys"]["crash"], timeout=ANSWER_BOUND)
    console = ConsoleSession(port, timeout=ANSWER_BOUND)
    console.login(ADMINS[0], ADMIN_PASSWORD)
    assert console.get("/scopes/").status == 200
    visitor = ConsoleSession(port, timeout=ANSWER_BOUND)
    assert visitor.get("/login/").status == 200 and "csrftoken" in visitor.cookies

    stop, pause = threading.Event(), threading.Event()
    started = time.monotonic()
    clients = [
        LoadClient(
            api,
            i,
            f"crash-{i % ACTORS}",
            keys=KEYS_PER_CLIENT,
            stop=stop,
            pause=pause,
            deadline=started + 600,
            max_requests=5000,
            seed=2000 + i,
            tolerate=lambda sample: sample.status == 503,  # judged by time window below
        )
        for i in range(CLIENTS)
    ]
    for client in clients:
        client.start()
    killed_processes, in_flight, killed_at, restarted_at, recovered_at = 0, 0, None, None, None
    outage_probes: list = []
    try:
        time.sleep(WARMUP)
        in_flight = sum(c.busy for c in clients)
        pause.set()
        killed_processes = private_pg.kill()
        killed_at = time.monotonic()
        wait_until(
            lambda: not any(c.busy for c in clients),
            timeout=2 * ANSWER_BOUND,
            what="the requests in flight at the crash to be answered",
        )
        outage_probes = probe_outage(port, api, console, visitor)
        # The load itself while the database is still down: with threaded workers the
        # requests in flight at the crash are all answered within SETTLE, so without this
        # the outage would see the probes' answers only.
        pause.clear()
        time.sleep(OUTAGE_LOAD)
        pause.set()
        wait_until(
            lambda: not any(c.busy for c in clients),
            timeout=2 * ANSWER_BOUND,
            what="the requests sent during the outage to be answered",
        )
        restarted_at = time.monotonic()
        private_pg.restart()
        pause.clear()
        deadline = restarted_at + RECOVERY_BOUND
        while time.monotonic() < deadline:
            if get(port, "/api/v1/health", timeout=60).status == 200:
                recovered_at = time.monotonic()
                break
            time.sleep(0.5)
        if recovered_at is not None:
            time.sleep(AFTER)
    finally:
        stop.set()
        pause.clear()
        if not private_pg.processes():  # failed between the kill and the restart
            private_pg.restart()
        for client in clients:
            client.join(2 * ANSWER_BOUND)
    assert not any(c.is_alive() for c in clients), "load clients hung"

    # Both workers' pools are back: ten health checks in a row answer 200.
    streak, steady_at, deadline = 0, None, time.monotonic() + RECOVERY_BOUND
    while time.monotonic() < deadline:
        streak = streak + 1 if get(port, "/api/v1/health", timeout=60).status == 200 else 0
        if streak >= 10:
            steady_at = time.monotonic()
            break
        time.sleep(0.2)

    samples = [s for c in clients for s in c.result.samples]
    keys = [k for c in clients for k in c.result.keys]
    problems: dict[str, list] = {"client checks": [f for c in clients for f in c.result.failures]}
    problems["recovery"] = [] if recovered_at else [f"no /health 200 in {RECOVERY_BOUND}s"]
    problems["steady"] = [] if steady_at else ["/health never answered 200 ten times in a row"]
    # Every answer, whenever it came: a success or a 503, never a 500 or no answer at all.
    problems["bad answers"] = [
        f"{s.kind}: {s.status or s.error} {s.body[:200]!r}"
        for s in samples
        if s.status not in (200, 201, 204, 503)
    ]
    # Answered while the database was down: a JSON 503, no traceback.
    down = [s for s in samples if killed_at + SETTLE <= s.finished <= restarted_at]
    problems["outage answers"] = [
        f"{s.kind}: {s.status} {s.content_type} {s.body[:200]!r}"
        for s in down
        if not is_json_503(s) or b"Traceback" in s.body
    ]
    problems["outage probes"] = [
        found for name, resp in outage_probes if (found := probe_problem(name, resp))
    ]
    if sorted(name for name, _ in outage_probes) != sorted(PROBES):
        problems["outage probes"].append(f"probes missing: {[n for n, _ in outage_probes]}")

    with private_pg.connect() as conn:
        checked = verify_keys(api, conn, keys)
        problems["writes"] = checked["failures"]
        problems["version chains"] = chain_problems(conn)
        problems["ledger"] = ledger_problems(conn)
        problems["forgotten text"] = forget_problems(conn)
        # The probes' writes were refused with a 503: nothing of them may exist.
        problems["refused writes"] = [
            f"{table}: {count} rows from a write answered 503"
            for table, count in conn.execute(
                """
                SELECT 'memory', count(*) FROM memory_core_memory WHERE text = 'written while down'
                UNION ALL
                SELECT 'digest', count(*) FROM memory_core_digest WHERE run_id = 'probe-run'
                """
            ).fetchall()
            if count
        ]
    verified = healthy.manage("verify_ledger")
    problems["verify_ledger"] = [] if verified.returncode == 0 else [verified.stderr.strip()]

    acknowledged_before = sum(
        1 for s in samples if s.kind != "turn" and s.status in (201, 204) and s.finished < killed_at
    )
    outage_latency = [s.finished - s.started for s in down]
    recovery = round(recovered_at - restarted_at, 1) if recovered_at else None
    stats = summarise(samples)
    figures.record(
        "database_killed_mid_load",
        clients=CLIENTS,
        faults_injected=1,
        postgres_processes_killed=killed_processes,
        requests_in_flight_at_crash=in_flight,
        outage_seconds=round(restarted_at - killed_at, 1),
        answers_during_outage=len(down),
        outage_503=sum(1 for s in down if s.status == 503),
        outage_answer_max_s=round(max(outage_latency, default=0.0), 1),
        outage_probe_answers={name: resp.status for name, resp in outage_probes},
        recovery_seconds=recovery,
        steady_seconds=round(steady_at - restarted_at, 1) if steady_at else None,
        writes_acknowledged_before_crash=acknowledged_before,
        uncertain_keys=sum(1 for k in keys if k.uncertain),
        writes_verified=checked["writes_verified"],
        probes=checked["probes"] + len(outage_probes),
        verify_ledger=verified.stdout.strip(),
        **stats,
        summary=(
            f"{len(samples)} requests; {len(down)} answered during a "
            f"{restarted_at - killed_at:.0f}s outage, {sum(1 for s in down if s.status == 503)} "
            f"of them JSON 503 (slowest {max(outage_latency, default=0.0):.0f}s); "
            f"/health 200 {recovery}s after the restart; {acknowledged_before} writes "
            f"acknowledged before the crash, {checked['writes_verified']} verified"
        ),
    )
    failed = {name: found[:8] for name, found in problems.items() if found}
    assert not failed, json.dumps(failed, indent=2, default=str)
    assert acknowledged_before >= 10, "the crash came before the load had written anything"
    assert down, "no request was answered while the database was down"
