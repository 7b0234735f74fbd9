"""Destructive acts while the person's agent is busy: an erasure of the person, and a forget
of a memory turns are showing, each with writers at full speed beside it.

Through the real app server (gunicorn, two workers) and the real console (a logged-in
session, CSRF and all). The erasure must complete (never a 503 from a deadlock), leave none
of the person's rows or text anywhere in the database, and no write for the ref may succeed
once the erasure has answered: every later one is a 410. The forget must answer 204 and its
text must be nowhere afterwards, whatever the turns were doing.
"""

import threading
import time
import uuid

import pytest

from .conftest import ADMIN_PASSWORD, ADMINS
from .harness import Api, ConsoleSession, forget_problems, ledger_problems

pytestmark = pytest.mark.reliability

TENANT = "erase"
WRITERS = 3
HISTORY = 120  # memories the person has before the erasure
BUSY_BEFORE = 1.0  # seconds of writes before the destructive act
BUSY_AFTER = 1.5  # and after it answered
OK = {200, 201, 204}


class Writers:
    """WRITERS threads posting remember, a message and a turn for one actor in turn, until
    stopped; every answer kept with when its request was sent."""

    def __init__(self, api: Api, actor: str, canary: str, query: str | None = None):
        self.api, self.actor, self.canary, self.query = api, actor, canary, query
        self.stop = threading.Event()
        self.answers: list[tuple[str, float, int]] = []  # (kind, sent at, status)
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self._loop, args=(n,)) for n in range(WRITERS)]

    def _loop(self, n: int) -> None:
        i = 0
        while not self.stop.is_set():
            i += 1
            for kind in ("remember", "message", "turn"):
                sent = time.monotonic()
                if kind == "remember":
                    resp = self.api.remember(
                        self.actor, f"w{n}-{i}", f"written {n} {i} {self.canary}"
                    )
                elif kind == "message":
                    resp = self.api.call(
                        "POST",
                        f"/threads/thr-{n}/messages",
                        {"actor": self.actor, "role": "user", "text": f"said {i} {self.canary}"},
                    )
                else:
                    resp = self.api.turn(
                        self.actor, f"run-{n}-{i}-{uuid.uuid4().hex[:6]}", self.query
                    )
                with self.lock:
                    self.answers.append((kind, sent, resp.status))

    def __enter__(self):
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=120)


def _tables_holding(conn, text: str) -> list[str]:
    found = []
    columns = conn.execute(
        """SELECT table_name, column_name FROM information_schema.columns
           WHERE table_schema = 'public'
             AND data_type IN ('text', 'character varying', 'jsonb', 'json', 'ARRAY')"""
    ).fetchall()
    for table, column in columns:
        row = conn.execute(
            f'SELECT 1 FROM "{table}" WHERE "{column}"::text LIKE %s LIMIT 1', [f"%{text}%"]
        ).fetchone()
        if row:
            found.append(f"{table}.{column}")
    return found


def _admin(app) -> ConsoleSession:
    session = ConsoleSession(app.port, timeout=300)
    session.login(ADMINS[0], ADMIN_PASSWORD)
    return session


def test_an_erasure_completes_while_the_persons_agent_writes(healthy, private_pg, seeded, figures):
    app = healthy
    api = Api(app.port, seeded["keys"][TENANT])
    actor, canary = f"p{uuid.uuid4().hex[:8]}", f"ERASECANARY{uuid.uuid4().hex[:8]}"
    for i in range(HISTORY):
        assert api.remember(actor, f"fact-{i}", f"fact {i} {canary}").status == 201
    session = _admin(app)

    with Writers(api, actor, canary) as writers:
        time.sleep(BUSY_BEFORE)
        started = time.monotonic()
        erased = session.post(
            f"/actors/{TENANT}/{actor}/erase/", {"confirm_ref": f"{TENANT}/{actor}"}
        )
        answered = time.monotonic()
        time.sleep(BUSY_AFTER)

    assert erased.status == 302, (erased.status, erased.body[:500])
    statuses = [status for _, _, status in writers.answers]
    assert not [s for s in statuses if s >= 500], statuses
    assert set(statuses) <= OK | {410}, sorted(set(statuses))
    late = [(k, s) for k, sent, s in writers.answers if sent > answered and s in OK]
    assert late == [], late
    assert any(s == 410 for _, sent, s in writers.answers if sent > answered)
    with private_pg.connect() as conn:
        assert _tables_holding(conn, canary) == []
        own = conn.execute(
            """SELECT count(*) FROM memory_core_memory m JOIN memory_core_actor a
               ON a.scope_id = m.scope_id OR a.id = m.origin_actor_id WHERE a.ref = %s""",
            [f"{TENANT}/{actor}"],
        ).fetchone()[0]
        threads = conn.execute(
            """SELECT count(*) FROM memory_core_thread t JOIN memory_core_actor a
               ON a.id = t.actor_id WHERE a.ref = %s""",
            [f"{TENANT}/{actor}"],
        ).fetchone()[0]
        assert (own, threads) == (0, 0)
        assert ledger_problems(conn) == []
    figures.record(
        "erase_under_load",
        requests=len(statuses) + HISTORY,
        writes_after_erasure=sum(1 for _, sent, _ in writers.answers if sent > answered),
        erase_seconds=round(answered - started, 2),
        summary=(
            f"erased {HISTORY}+ memories in {answered - started:.1f}s with {WRITERS} writers busy; "
            f"{len(statuses)} writes, 0 accepted after the answer"
        ),
    )


def test_a_forget_completes_while_turns_show_the_memory(healthy, private_pg, seeded, figures):
    app = healthy
    api = Api(app.port, seeded["keys"][TENANT])
    actor, canary = f"f{uuid.uuid4().hex[:8]}", f"FORGETCANARY{uuid.uuid4().hex[:8]}"
    shown = api.remember(actor, "passport", f"passport renewed {canary}")
    assert shown.status == 201
    memory = shown.json()["id"]

    with Writers(api, actor, f"other{uuid.uuid4().hex[:6]}", query="passport") as writers:
        time.sleep(BUSY_BEFORE)
        started = time.monotonic()
        gone = api.forget(actor, memory)
        answered = time.monotonic()
        time.sleep(BUSY_AFTER)

    assert gone.status == 204, (gone.status, gone.body[:300])
    statuses = [status for _, _, status in writers.answers]
    assert set(statuses) <= OK, sorted(set(statuses))
    with private_pg.connect() as conn:
        assert _tables_holding(conn, canary) == []
        assert forget_problems(conn) == []
        assert ledger_problems(conn) == []
    figures.record(
        "forget_under_load",
        requests=len(statuses) + 2,
        forget_seconds=round(answered - started, 2),
        summary=f"forgot a memory shown by busy turns in {answered - started:.2f}s, "
        f"{len(statuses)} writes beside it, text nowhere after",
    )
