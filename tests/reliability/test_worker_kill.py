"""Kill -9 an app worker mid-request: no partial change.

Every change is recorded three times: its state, its ledger event, and its access-log row,
all committed in one transaction (memory_core.changes.audited). After a worker dies in the
middle of one, either all three exist or none does, the ledger verifies and gunicorn has
replaced the worker.

Two ways in. Pinned: a test-only trigger in the private database holds the worker's request
at a chosen point (inside its transaction, at its COMMIT, while it writes the access-log
row) and the worker serving exactly that connection is killed there; for a remember, and
for each change an administrator or a host makes besides (pin, invalidate, grant, key
creation and revocation, actor registration). At random: workers are killed in the middle
of whatever request they are serving under load.
"""

import json
import random
import re
import secrets
import signal
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlencode

import psutil
import pytest

from .harness import (
    HOLD_FUNCTION,
    Api,
    ConsoleSession,
    chain_problems,
    get,
    ledger_problems,
    request,
    run_seed,
    wait_until,
)

pytestmark = pytest.mark.reliability

HOLD = 3.0  # seconds a pinned trigger holds the request
RANDOM_KILLS = 6
RANDOM_CLIENTS = 6

# Where a remember is held, by the actor it is made for (each point its own actor).
HOLDS = {
    # Inside the transaction: the memory row is inserted, the ledger event not yet.
    "in-transaction": """
        CREATE TRIGGER reliability_hold_tx AFTER INSERT ON memory_core_memory
        FOR EACH ROW WHEN (NEW.key = 'held-in-transaction')
        EXECUTE FUNCTION reliability_hold('{hold}')
    """,
    # At COMMIT (a deferred trigger runs inside it): the commit completes while the
    # worker is dead. Had the access-log row been left until after the commit, it would
    # be missing now.
    "at-commit": """
        CREATE CONSTRAINT TRIGGER reliability_hold_commit AFTER INSERT ON memory_core_ledgerevent
        DEFERRABLE INITIALLY DEFERRED
        FOR EACH ROW WHEN (NEW.actor_ref = 'kill/kill-at-commit')
        EXECUTE FUNCTION reliability_hold('{hold}')
    """,
    # Writing the access-log row, the last statement of the transaction.
    "answering": """
        CREATE TRIGGER reliability_hold_answer AFTER INSERT ON memory_core_accesslog
        FOR EACH ROW WHEN (NEW.actor_ref = 'kill/kill-answering' AND NEW.action = 'remember')
        EXECUTE FUNCTION reliability_hold('{hold}')
    """,
}
DROPS = (
    ("reliability_hold_tx", "memory_core_memory"),
    ("reliability_hold_event", "memory_core_ledgerevent"),
    ("reliability_hold_commit", "memory_core_ledgerevent"),
    ("reliability_hold_answer", "memory_core_accesslog"),
)
ACTORS = {
    "in-transaction": "kill-in-transaction",
    "at-commit": "kill-at-commit",
    "answering": "kill-answering",
}
KEYS = {"in-transaction": "held-in-transaction", "at-commit": "held", "answering": "held"}


def remember_records(conn, actor: str, key: str) -> tuple[int, int, int]:
    """(memory rows, their ledger events, their access-log rows) for (actor:<actor>, key).

    `actor` is named as the kill tenant's key names it; rows hold the qualified ref."""
    actor = f"kill/{actor}"
    uids = [
        uid
        for (uid,) in conn.execute(
            """
            SELECT m.uid FROM memory_core_memory m JOIN memory_core_scope s ON s.id = m.scope_id
            WHERE s.token = %s AND m.key = %s
            """,
            [f"actor:{actor}", key],
        ).fetchall()
    ]
    events = conn.execute(
        """
        SELECT count(*) FROM memory_core_ledgerevent
        WHERE kind = 'memory.remembered' AND actor_ref = %s AND payload->>'memory' = ANY(%s)
        """,
        [actor, uids],
    ).fetchone()[0]
    logged = conn.execute(
        """
        SELECT count(*) FROM memory_core_accesslog
        WHERE action = 'remember' AND actor_ref = %s AND memory_ids && %s::varchar[]
        """,
        [actor, uids],
    ).fetchone()[0]
    # A ledger event whose memory row was lost names a memory that does not exist; that is
    # chain_problems' "names a memory that was never stored".
    return len(uids), events, logged


def wait_for_workers(app, count: int) -> None:
    wait_until(lambda: len(app.worker_pids()) == count, timeout=60, what="gunicorn to respawn")
    wait_until(
        lambda: get(app.port, "/api/v1/health", timeout=30).status == 200,
        timeout=60,
        what="health after the respawn",
    )


def kill_held(app, private_pg, hold: str, send, what: str) -> dict:
    """Install the trigger `hold`, run `send(on_sent)` (one request) until the trigger holds
    it, kill the worker serving it, drop every hold trigger; return its answer (None: the
    killed worker answered nothing) and the worker killed."""
    sent = {}
    outcome = {}

    def run():
        outcome["resp"] = send(lambda port: sent.setdefault("port", port))

    with private_pg.connect() as conn:
        conn.execute(HOLD_FUNCTION)
        conn.execute(hold)
        try:
            thread = threading.Thread(target=run, daemon=True)
            thread.start()
            backend = wait_until(
                lambda: conn.execute(
                    "SELECT pid FROM pg_stat_activity WHERE wait_event = 'PgSleep' "
                    "AND datname = current_database() AND pid <> pg_backend_pid()"
                ).fetchone(),
                timeout=30,
                interval=0.05,
                what=f"the {what} to be held",
            )[0]
            worker = wait_until(
                lambda: app.worker_serving(sent.get("port", -1)),
                timeout=10,
                interval=0.05,
                what="the worker serving the held request",
            )
            psutil.Process(worker).send_signal(signal.SIGKILL)
            thread.join(60)
            # The backend finishes its sleep, then finds its client gone.
            wait_until(
                lambda: (
                    not conn.execute(
                        "SELECT 1 FROM pg_stat_activity WHERE pid = %s", [backend]
                    ).fetchone()
                ),
                timeout=60,
                what="the held backend to end",
            )
        finally:
            for trigger, table in DROPS:
                conn.execute(f"DROP TRIGGER IF EXISTS {trigger} ON {table}")
    wait_for_workers(app, app.workers)
    resp = outcome.get("resp")
    return {
        "answer": resp.status if resp else None,
        "error": resp.error if resp else "no answer",
        "worker": worker,
    }


def kill_pinned(app, private_pg, api: Api, point: str) -> dict:
    """Hold a remember at `point`, kill the worker serving it, return what was stored."""
    actor, key = ACTORS[point], KEYS[point]
    assert api.turn(actor, f"register-{point}").status == 200  # the actor exists beforehand
    result = kill_held(
        app,
        private_pg,
        HOLDS[point].format(hold=HOLD),
        lambda on_sent: api.remember(actor, key, f"held {point}", on_sent=on_sent),
        f"remember to be held {point}",
    )
    with private_pg.connect() as conn:
        result["records"] = remember_records(conn, actor, key)
    return result


@pytest.mark.parametrize("point", ["in-transaction", "at-commit", "answering"])
def test_worker_killed_at_a_pinned_point(point, healthy, seeded, private_pg, figures):
    api = Api(healthy.port, seeded["keys"]["kill"], timeout=60)
    result = kill_pinned(healthy, private_pg, api, point)
    figures.record(
        f"worker_killed_{point}",
        faults_injected=1,
        writes_verified=1,
        requests=2,
        records=dict(zip(("memory", "ledger", "access_log"), result["records"], strict=True)),
        answer=result["answer"],
        summary=f"worker killed {point}: stored (memory, ledger, access log) = {result['records']}",
    )
    assert result["answer"] is None, f"the killed worker answered: {result}"
    assert result["records"] in {(0, 0, 0), (1, 1, 1)}, f"a partial write: {result}"
    with private_pg.connect() as conn:
        assert not chain_problems(conn)
        assert not ledger_problems(conn)


# --- every other change, held where its ledger event is written or at its COMMIT ----------

# Points where a change is held, each a trigger on its ledger event (every change below has
# one): right after the event is inserted (the access-log row and the COMMIT still to come),
# or at the COMMIT.
CHANGE_HOLDS = {
    "in-transaction": """
        CREATE TRIGGER reliability_hold_event AFTER INSERT ON memory_core_ledgerevent
        FOR EACH ROW WHEN ({when}) EXECUTE FUNCTION reliability_hold('{hold}')
    """,
    "at-commit": """
        CREATE CONSTRAINT TRIGGER reliability_hold_commit AFTER INSERT ON memory_core_ledgerevent
        DEFERRABLE INITIALLY DEFERRED
        FOR EACH ROW WHEN ({when}) EXECUTE FUNCTION reliability_hold('{hold}')
    """,
}
CHANGES = ("pin", "invalidate", "grant", "key-create", "key-revoke", "actor-put", "first-call")
ADMIN, ROOT = "kill-admin", "kill-root"
STAFF_PASSWORD = "pw-" + secrets.token_urlsafe(12)


def _safe(value: str) -> str:
    """A value pasted into a trigger's WHEN clause: ours, but checked all the same."""
    assert re.fullmatch(r"[A-Za-z0-9_./:-]+", value), value
    return value


@pytest.fixture(scope="module")
def staff(app, seeded, private_pg):
    """In the kill tenant: an administrator (ROOT is a superuser, for grants), memories to
    pin and invalidate, keys to revoke, users to grant to, and a scope per point to grant at."""
    spec = {
        "scopes": [[f"team:kill/grants-{p}", "tenant:kill"] for p in CHANGE_HOLDS],
        "users": [
            [ADMIN, STAFF_PASSWORD, [["tenant:kill", "admin"]]],
            [ROOT, STAFF_PASSWORD, []],
            *[[f"kill-grantee-{p}", STAFF_PASSWORD, []] for p in CHANGE_HOLDS],
        ],
        "keys": [[f"kill-revoke-{p}", "tenant:kill"] for p in CHANGE_HOLDS],
        "memories": [
            ["tenant:kill", f"kill-{change}-{p}", f"a policy to {change}"]
            for change in ("pin", "invalidate")
            for p in CHANGE_HOLDS
        ],
    }
    made = run_seed(app.env, spec)
    with private_pg.connect() as conn:
        conn.execute("UPDATE auth_user SET is_superuser = true WHERE username = %s", [ROOT])
        keys = dict(
            conn.execute(
                "SELECT name, uid FROM memory_core_apikey WHERE name LIKE 'kill-revoke-%'"
            ).fetchall()
        )
    sessions = {}
    for name in (ADMIN, ROOT):
        sessions[name] = ConsoleSession(app.port, timeout=60)
        sessions[name].login(name, STAFF_PASSWORD)
    return {"memories": made["memories"], "keys": keys, "sessions": sessions}


def _post(session: ConsoleSession, path: str, form: dict, on_sent):
    """A console form POST that reports its client port (to find the worker serving it)."""
    headers = session.headers(
        {
            "Content-Type": "application/x-www-form-urlencoded",
            "X-CSRFToken": session.cookies.get("csrftoken", ""),
        }
    )
    return request(
        session.port,
        "POST",
        path,
        body=urlencode(form),
        headers=headers,
        timeout=session.timeout,
        on_sent=on_sent,
    )


EVENT = "SELECT count(*) FROM memory_core_ledgerevent WHERE kind = %s AND "
LOGGED = "SELECT count(*) FROM memory_core_accesslog WHERE action = %s AND outcome = %s AND "


class HeldChange:
    """One change made at `point`: how to send it, which ledger event holds it, and the
    three queries that count what it left (its state, its ledger event, its access-log
    row; each 0 or 1)."""

    def __init__(self, change: str, point: str, staff, api: Api):
        self.change, self.point, self.api = change, point, api
        self.admin = staff["sessions"][ADMIN]
        self.root = staff["sessions"][ROOT]
        self.memory = _safe(staff["memories"].get(f"tenant:kill/kill-{change}-{point}", "-"))
        self.grantee = f"kill-grantee-{point}"
        self.grant_scope = f"team:kill/grants-{point}"
        self.key_name = f"kill-new-{point}"
        self.revoked = _safe(staff["keys"].get(f"kill-revoke-{point}", "-"))
        self.ref = f"kill-{change}-{point}"  # the actor to register, as the kill key names it

    def when(self) -> str:
        """The WHEN clause matching this change's ledger event, and no other."""
        return {
            "pin": f"NEW.kind = 'memory.pinned' AND NEW.payload->>'memory' = '{self.memory}'",
            "invalidate": (
                f"NEW.kind = 'memory.invalidated' AND NEW.payload->>'memory' = '{self.memory}'"
            ),
            "grant": f"NEW.kind = 'grant.set' AND NEW.payload->>'user' = '{self.grantee}'",
            "key-create": "NEW.kind = 'api_key.created' AND NEW.scope = 'tenant:kill'",
            "key-revoke": (
                f"NEW.kind = 'api_key.revoked' AND NEW.payload->>'api_key' = '{self.revoked}'"
            ),
            "actor-put": f"NEW.kind = 'actor.registered' AND NEW.actor_ref = 'kill/{self.ref}'",
            "first-call": f"NEW.kind = 'actor.registered' AND NEW.actor_ref = 'kill/{self.ref}'",
        }[self.change]

    def send(self, on_sent):
        admin, memory = self.admin, f"/memories/{self.memory}"
        if self.change == "pin":
            return _post(admin, f"{memory}/pin/", {}, on_sent)
        if self.change == "invalidate":
            return _post(admin, f"{memory}/invalidate/", {"reason": "held, killed"}, on_sent)
        if self.change == "grant":
            form = {"username": self.grantee, "scope": self.grant_scope, "role": "auditor"}
            return _post(self.root, "/users/grants/", form, on_sent)
        if self.change == "key-create":
            form = {"name": self.key_name, "reach": "tenant:kill"}
            return _post(admin, "/keys/create/", form, on_sent)
        if self.change == "key-revoke":
            return _post(admin, f"/keys/{self.revoked}/revoke/", {}, on_sent)
        if self.change == "actor-put":
            return self.api.call("PUT", f"/actors/{self.ref}", {"scopes": []}, on_sent=on_sent)
        return self.api.turn(self.ref, "first", on_sent=on_sent)

    def queries(self) -> list[tuple[str, list]]:
        memory, ref = self.memory, f"kill/{self.ref}"
        created = "IN (SELECT uid FROM memory_core_apikey WHERE name = %s)"
        return {
            "pin": [
                ("SELECT count(*) FROM memory_core_memory WHERE uid = %s AND pinned", [memory]),
                (EVENT + "payload->>'memory' = %s", ["memory.pinned", memory]),
                (LOGGED + "%s = ANY(memory_ids)", ["pin", 200, memory]),
            ],
            "invalidate": [
                (
                    "SELECT count(*) FROM memory_core_memory "
                    "WHERE uid = %s AND retired_reason = 'invalidated'",
                    [memory],
                ),
                (EVENT + "payload->>'memory' = %s", ["memory.invalidated", memory]),
                (LOGGED + "%s = ANY(memory_ids)", ["invalidate", 200, memory]),
            ],
            "grant": [
                (
                    "SELECT count(*) FROM memory_core_scopegrant g "
                    "JOIN auth_user u ON u.id = g.user_id "
                    "JOIN memory_core_scope s ON s.id = g.scope_id "
                    "WHERE u.username = %s AND s.token = %s",
                    [self.grantee, self.grant_scope],
                ),
                (
                    EVENT + "payload->>'user' = %s AND scope = %s",
                    ["grant.set", self.grantee, self.grant_scope],
                ),
                (LOGGED + "scope = %s", ["grant", 200, self.grant_scope]),
            ],
            "key-create": [
                ("SELECT count(*) FROM memory_core_apikey WHERE name = %s", [self.key_name]),
                (EVENT + f"payload->>'api_key' {created}", ["api_key.created", self.key_name]),
                (
                    LOGGED + f"detail->>'api_key' {created}",
                    ["api_key.create", 201, self.key_name],
                ),
            ],
            "key-revoke": [
                (
                    "SELECT count(*) FROM memory_core_apikey "
                    "WHERE uid = %s AND revoked_at IS NOT NULL",
                    [self.revoked],
                ),
                (EVENT + "payload->>'api_key' = %s", ["api_key.revoked", self.revoked]),
                (LOGGED + "detail->>'api_key' = %s", ["api_key.revoke", 200, self.revoked]),
            ],
            "actor-put": [
                ("SELECT count(*) FROM memory_core_actor WHERE ref = %s", [ref]),
                (EVENT + "actor_ref = %s", ["actor.registered", ref]),
                (LOGGED + "actor_ref = %s", ["actor.put", 200, ref]),
            ],
            "first-call": [
                ("SELECT count(*) FROM memory_core_actor WHERE ref = %s", [ref]),
                (EVENT + "actor_ref = %s", ["actor.registered", ref]),
                (LOGGED + "actor_ref = %s", ["actor.register", 201, ref]),
            ],
        }[self.change]

    def records(self, conn) -> tuple[int, int, int]:
        state, event, logged = (
            conn.execute(sql, params).fetchone()[0] for sql, params in self.queries()
        )
        return state, event, logged


def key_event_problems(conn) -> list[str]:
    """Key events naming a key that was never stored (a key's row and its event commit
    together, so a rolled-back creation leaves neither)."""
    rows = conn.execute(
        """
        SELECT e.kind, e.payload->>'api_key' FROM memory_core_ledgerevent e
        WHERE e.kind LIKE 'api_key.%'
          AND NOT EXISTS (SELECT 1 FROM memory_core_apikey k WHERE k.uid = e.payload->>'api_key')
        """
    ).fetchall()
    return [f"{kind} names {uid}, a key that was never stored" for kind, uid in rows]


@pytest.mark.parametrize("point", list(CHANGE_HOLDS))
@pytest.mark.parametrize("change", CHANGES)
def test_a_change_killed_at_a_pinned_point_is_recorded_whole_or_not_at_all(
    change, point, healthy, seeded, staff, private_pg, figures
):
    api = Api(healthy.port, seeded["keys"]["kill"], timeout=60)
    held = HeldChange(change, point, staff, api)
    hold = CHANGE_HOLDS[point].format(when=held.when(), hold=HOLD)
    result = kill_held(healthy, private_pg, hold, held.send, f"{change} to be held {point}")
    with private_pg.connect() as conn:
        records = held.records(conn)
        keys = key_event_problems(conn)
        ledger = ledger_problems(conn)
    figures.record(
        f"worker_killed_{change}_{point}",
        faults_injected=1,
        writes_verified=1,
        requests=1,
        records=dict(zip(("state", "ledger", "access_log"), records, strict=True)),
        answer=result["answer"],
        summary=f"{change} killed {point}: stored (state, ledger, access log) = {records}",
    )
    assert result["answer"] is None, f"the killed worker answered: {result}"
    assert records in {(0, 0, 0), (1, 1, 1)}, f"a partial change: {records} {result}"
    assert not keys, keys
    assert not ledger, ledger[:10]


@dataclass
class Attempt:
    actor: str
    key: str
    status: int | None


def test_workers_killed_at_random_under_load(healthy, seeded, private_pg, figures):
    app = healthy
    api = Api(app.port, seeded["keys"]["kill"], timeout=60)
    stop = threading.Event()
    in_flight: dict[int, int] = {}  # client index -> local port of its request in flight
    attempts: list[Attempt] = []
    other: list = []
    lock = threading.Lock()

    def client(index: int):
        rng = random.Random(3000 + index)
        actor = f"kill-load-{index}"
        for n in range(2000):
            if stop.is_set():
                return

            def sent(port, index=index):
                in_flight[index] = port

            if rng.random() < 0.5:
                key = f"w{index}-{n}"
                resp = api.remember(actor, key, f"write {n} of {index}", on_sent=sent)
                with lock:
                    attempts.append(Attempt(actor, key, resp.status))
            else:
                resp = api.turn(actor, f"kill-run-{index}-{n}", on_sent=sent)
                with lock:
                    other.append(resp.status)
            in_flight.pop(index, None)

    threads = [
        threading.Thread(target=client, args=(i,), daemon=True) for i in range(RANDOM_CLIENTS)
    ]
    for thread in threads:
        thread.start()
    kills = []
    rng = random.Random(7)
    try:
        time.sleep(3)
        for _ in range(RANDOM_KILLS):
            worker = None
            for _ in range(100):  # a worker serving one of the requests in flight
                ports = list(in_flight.values())
                if ports:
                    worker = app.worker_serving(rng.choice(ports))
                if worker:
                    break
                time.sleep(0.02)
            if worker:
                psutil.Process(worker).send_signal(signal.SIGKILL)
                kills.append(worker)
            wait_for_workers(app, app.workers)
            time.sleep(rng.uniform(0.5, 1.5))
    finally:
        stop.set()
        for thread in threads:
            thread.join(120)
    assert not any(t.is_alive() for t in threads), "load clients hung"

    partial, lost_ok = [], 0
    with private_pg.connect() as conn:
        for attempt in attempts:
            records = remember_records(conn, attempt.actor, attempt.key)
            if attempt.status == 201:
                if records != (1, 1, 1):
                    partial.append(f"acknowledged {attempt.key}: {records}")
            elif records == (0, 0, 0) or records == (1, 1, 1):
                lost_ok += 1
            else:
                partial.append(f"{attempt.status or 'no answer'} {attempt.key}: {records}")
        chains = chain_problems(conn)
        ledger = ledger_problems(conn)
    verified = app.manage("verify_ledger")
    unanswered = [a for a in attempts if a.status is None] + [s for s in other if s is None]
    server_errors = [s for s in [a.status for a in attempts] + other if s and s >= 500]
    figures.record(
        "workers_killed_at_random",
        faults_injected=len(kills),
        requests=len(attempts) + len(other),
        writes_verified=len(attempts),
        remembers_unanswered=sum(1 for a in attempts if a.status is None),
        requests_unanswered=len(unanswered),
        verify_ledger=verified.stdout.strip(),
        summary=(
            f"{len(kills)} workers killed mid-request under load; {len(attempts)} remembers "
            f"checked, {len(unanswered)} requests cut off, {len(partial)} partial writes"
        ),
    )
    assert len(kills) >= RANDOM_KILLS - 1, f"only {len(kills)} workers were caught mid-request"
    assert unanswered, "no request was cut off: the kills missed every request"
    assert not server_errors, server_errors[:5]
    assert not partial, json.dumps(partial[:10])
    assert not chains, chains[:10]
    assert not ledger, ledger[:10]
    assert verified.returncode == 0, verified.stdout + verified.stderr
