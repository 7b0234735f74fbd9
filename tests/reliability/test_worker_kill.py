"""Kill -9 an app worker mid-request: no partial write.

A remember is three records: the memory row, its ledger event, and its access-log row. After
a worker dies in the middle of one, either all three exist or none does, the ledger verifies
and gunicorn has replaced the worker.

Two ways in. Pinned: a test-only trigger in the private database holds the worker's
remember at a chosen point (inside its transaction, at its COMMIT, while it writes the
access-log row) and the worker serving exactly that connection is killed there. At random:
workers are killed in the middle of whatever request they are serving under load.
"""

import json
import random
import signal
import threading
import time
from dataclasses import dataclass

import psutil
import pytest

from .harness import HOLD_FUNCTION, Api, chain_problems, get, ledger_problems, wait_until

pytestmark = pytest.mark.reliability

HOLD = 3.0  # seconds a pinned trigger holds the remember
RANDOM_KILLS = 6
RANDOM_CLIENTS = 6

# The access-log row of a write is committed with the write (memory_core.writes._after runs
# inside the transaction). Were it written after the commit, a worker killed between the two
# would leave a memory and its ledger event without it; set False to see the pinned test
# expect exactly that (xfail) and the random test count it instead of failing.
ACCESS_LOG_IN_TRANSACTION = True

# Where a remember is held, by the actor it is made for (each point its own actor).
HOLDS = {
    # Inside the transaction: the memory row is inserted, the ledger event not yet.
    "in-transaction": """
        CREATE TRIGGER reliability_hold_tx AFTER INSERT ON memory_core_memory
        FOR EACH ROW WHEN (NEW.key = 'held-in-transaction')
        EXECUTE FUNCTION reliability_hold('{hold}')
    """,
    # At COMMIT (a deferred trigger runs inside it): the commit completes while the
    # worker is dead, before it could write the access-log row.
    "at-commit": """
        CREATE CONSTRAINT TRIGGER reliability_hold_commit AFTER INSERT ON memory_core_ledgerevent
        DEFERRABLE INITIALLY DEFERRED
        FOR EACH ROW WHEN (NEW.actor_ref = 'kill/kill-at-commit')
        EXECUTE FUNCTION reliability_hold('{hold}')
    """,
    # Writing the access-log row (autocommit): everything is written, only the answer is lost.
    "answering": """
        CREATE TRIGGER reliability_hold_answer AFTER INSERT ON memory_core_accesslog
        FOR EACH ROW WHEN (NEW.actor_ref = 'kill/kill-answering' AND NEW.action = 'remember')
        EXECUTE FUNCTION reliability_hold('{hold}')
    """,
}
DROPS = (
    ("reliability_hold_tx", "memory_core_memory"),
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


def kill_pinned(app, private_pg, api: Api, point: str) -> dict:
    """Hold a remember at `point`, kill the worker serving it, return what was stored."""
    actor, key = ACTORS[point], KEYS[point]
    assert api.turn(actor, f"register-{point}").status == 200  # the actor exists beforehand
    sent = {}
    outcome = {}

    def send():
        outcome["resp"] = api.remember(
            actor, key, f"held {point}", on_sent=lambda port: sent.setdefault("port", port)
        )

    with private_pg.connect() as conn:
        conn.execute(HOLD_FUNCTION)
        conn.execute(HOLDS[point].format(hold=HOLD))
        try:
            thread = threading.Thread(target=send, daemon=True)
            thread.start()
            backend = wait_until(
                lambda: conn.execute(
                    "SELECT pid FROM pg_stat_activity WHERE wait_event = 'PgSleep' "
                    "AND datname = current_database() AND pid <> pg_backend_pid()"
                ).fetchone(),
                timeout=30,
                interval=0.05,
                what=f"the remember to be held {point}",
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
        records = remember_records(conn, actor, key)
    wait_for_workers(app, app.workers)
    resp = outcome.get("resp")
    return {
        "records": records,
        "answer": resp.status if resp else None,
        "error": resp.error if resp else "no answer",
        "worker": worker,
    }


@pytest.mark.parametrize(
    "point",
    [
        "in-transaction",
        pytest.param(
            "at-commit",
            marks=pytest.mark.xfail(
                not ACCESS_LOG_IN_TRANSACTION,
                strict=True,
                reason=(
                    "the access-log row of a write is written after its transaction commits "
                    "(memory_core.writes._after, forgetting._forget): a worker killed between "
                    "the two leaves the memory and its ledger event without it"
                ),
            ),
        ),
        "answering",
    ],
)
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

    partial, gaps, lost_ok = [], [], 0
    with private_pg.connect() as conn:
        for attempt in attempts:
            records = remember_records(conn, attempt.actor, attempt.key)
            if attempt.status == 201:
                if records != (1, 1, 1):
                    partial.append(f"acknowledged {attempt.key}: {records}")
            elif records == (0, 0, 0) or records == (1, 1, 1):
                lost_ok += 1
            elif records == (1, 1, 0) and not ACCESS_LOG_IN_TRANSACTION:
                gaps.append(attempt.key)
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
        access_log_gaps=len(gaps),
        verify_ledger=verified.stdout.strip(),
        summary=(
            f"{len(kills)} workers killed mid-request under load; {len(attempts)} remembers "
            f"checked, {len(unanswered)} requests cut off, {len(partial)} partial writes, "
            f"{len(gaps)} missing access-log rows"
        ),
    )
    assert len(kills) >= RANDOM_KILLS - 1, f"only {len(kills)} workers were caught mid-request"
    assert unanswered, "no request was cut off: the kills missed every request"
    assert not server_errors, server_errors[:5]
    assert not partial, json.dumps(partial[:10])
    assert not chains, chains[:10]
    assert not ledger, ledger[:10]
    assert verified.returncode == 0, verified.stdout + verified.stderr
