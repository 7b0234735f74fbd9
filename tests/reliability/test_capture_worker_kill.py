"""Kill -9 a capture worker mid-extraction: nothing is lost, nothing is written twice.

A worker claims a job with a lease and asks the model outside any transaction; its writes
(the memories through remember, the extraction's record, its ledger events and access-log
rows) are one transaction. So a worker killed while the model is thinking has written
nothing, and one killed inside its write transaction has committed nothing; either way the
job stays queued and the next worker claims it when the lease runs out, and reads the same
messages. Afterwards each thread has exactly one completed extraction, each key one
version, and the ledger verifies. Bounded: about half a minute, the leases included.
"""

import signal
import subprocess
import sys

import pytest

from memory_console.loadgen.server import PROJECT
from tests.chat_server import ChatServer

from .harness import HOLD_FUNCTION, Api, chain_problems, ledger_problems, wait_until

pytestmark = pytest.mark.reliability

ACTOR = "capture-kill"  # in tenant kill: stored as kill/capture-kill
THREADS = {
    "cap-asking": ["alpha likes green tea", "bravo is their dog"],
    "cap-writing": ["charlie is their manager", "delta is their home town"],
}
# The extractor the workers use: each model call takes DELAY seconds; with one attempt of
# TIMEOUT seconds a claim's lease is TIMEOUT + 1 + 5 = 9 seconds (extractor.lease_seconds).
DELAY, TIMEOUT = 1.5, 3
HOLD_WRITE = """
    CREATE TRIGGER reliability_hold_capture AFTER INSERT ON memory_core_extraction
    FOR EACH ROW WHEN (NEW.thread_ref = 'cap-writing' AND NEW.outcome = 'done')
    EXECUTE FUNCTION reliability_hold('6')
"""
ENQUEUE = """
    INSERT INTO memory_core_capturejob
        (actor_id, thread_ref, reason, queued_at, not_before, attempts, last_error, locked_by)
    SELECT a.id, %s, 'import', clock_timestamp(), clock_timestamp(), 0, '', ''
    FROM memory_core_actor a WHERE a.ref = %s
"""


def start_worker(app, chat, log) -> subprocess.Popen:
    env = {
        **app.env,
        **chat.env(
            MEMORY_EXTRACTOR_TIMEOUT=TIMEOUT,
            MEMORY_EXTRACTOR_RETRIES=0,
            MEMORY_EXTRACTOR_COOLDOWN=0,
        ),
    }
    return subprocess.Popen(
        [sys.executable, "manage.py", "capture_worker", "--poll", "0.2"],
        cwd=PROJECT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        start_new_session=True,
    )


def kill(worker: subprocess.Popen) -> None:
    worker.send_signal(signal.SIGKILL)
    worker.wait(timeout=10)


def written(conn, thread: str) -> tuple[int, int]:
    """(memory versions learned in `thread`, completed extractions of it)."""
    memories = conn.execute(
        "SELECT count(*) FROM memory_core_memory WHERE origin_thread = %s", [thread]
    ).fetchone()[0]
    done = conn.execute(
        "SELECT count(*) FROM memory_core_extraction WHERE thread_ref = %s AND outcome = 'done'",
        [thread],
    ).fetchone()[0]
    return memories, done


def test_a_capture_worker_killed_mid_extraction_loses_nothing(
    healthy, seeded, private_pg, figures, tmp_path
):
    api = Api(healthy.port, seeded["keys"]["kill"], timeout=60)
    for thread, texts in THREADS.items():
        for text in texts:
            body = {"actor": ACTOR, "role": "user", "text": text}
            assert api.call("POST", f"/threads/{thread}/messages", body).status == 201
    log = open(tmp_path / "capture-workers.log", "wb")  # noqa: SIM115 - closed below
    workers = []
    with ChatServer(mode="slow", delay=DELAY) as chat, private_pg.connect() as conn:
        conn.execute(HOLD_FUNCTION)
        try:
            # 1. Killed while the model is asked: nothing written, the job still queued.
            conn.execute(ENQUEUE, ["cap-asking", f"kill/{ACTOR}"])
            workers.append(start_worker(healthy, chat, log))
            wait_until(lambda: chat.requests, timeout=60, interval=0.05, what="a model call")
            kill(workers[-1])
            assert written(conn, "cap-asking") == (0, 0)
            # 2. Killed inside its write transaction: nothing of it committed.
            conn.execute(HOLD_WRITE)
            conn.execute(ENQUEUE, ["cap-writing", f"kill/{ACTOR}"])
            workers.append(start_worker(healthy, chat, log))
            wait_until(
                lambda: conn.execute(
                    "SELECT 1 FROM pg_stat_activity WHERE wait_event = 'PgSleep' "
                    "AND datname = current_database() AND pid <> pg_backend_pid()"
                ).fetchone(),
                timeout=60,
                interval=0.05,
                what="the extraction's writes to be held",
            )
            kill(workers[-1])
            conn.execute(
                "DROP TRIGGER IF EXISTS reliability_hold_capture ON memory_core_extraction"
            )
            assert written(conn, "cap-writing") == (0, 0)
            queued = conn.execute("SELECT count(*) FROM memory_core_capturejob").fetchone()[0]
            assert queued == 2
            # 3. The next worker claims both when their leases run out, and finishes them.
            workers.append(start_worker(healthy, chat, log))
            wait_until(
                lambda: not conn.execute("SELECT 1 FROM memory_core_capturejob").fetchone(),
                timeout=45,
                interval=0.25,
                what="the queue to drain",
            )
        finally:
            conn.execute(
                "DROP TRIGGER IF EXISTS reliability_hold_capture ON memory_core_extraction"
            )
            for worker in workers:
                if worker.poll() is None:
                    worker.terminate()
                    worker.wait(timeout=30)
            log.close()
        counts = {thread: written(conn, thread) for thread in THREADS}
        versions = conn.execute(
            """
            SELECT m.key, count(*) FROM memory_core_memory m
            JOIN memory_core_scope s ON s.id = m.scope_id
            WHERE s.token = %s GROUP BY m.key
            """,
            [f"actor:kill/{ACTOR}"],
        ).fetchall()
        extracted = conn.execute(
            "SELECT count(*) FROM memory_core_ledgerevent WHERE kind = 'capture.extracted' "
            "AND actor_ref = %s",
            [f"kill/{ACTOR}"],
        ).fetchone()[0]
        problems = chain_problems(conn) + ledger_problems(conn)
    figures.record(
        "capture_worker_killed",
        faults_injected=2,
        writes_verified=len(versions),
        requests=len(chat.requests),
        summary=f"capture workers killed asking and writing: {counts}",
    )
    assert counts == {"cap-asking": (2, 1), "cap-writing": (2, 1)}, counts
    assert sorted(versions) == [
        ("note-alpha", 1),
        ("note-bravo", 1),
        ("note-charlie", 1),
        ("note-delta", 1),
    ]
    assert extracted == 2
    assert not problems, problems
