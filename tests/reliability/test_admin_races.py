"""Two administrators promoting, correcting and forgetting the same memory at once, while an
agent remembers the same key: the outcome is one of the serial orders, never two live rows,
never an error page (403/404/422 refusals are fine).

Through the real console (two logged-in sessions, CSRF and all) and the API, against an app
server with 4 workers so the four requests really run at once. Free rounds start the four
requests together. Held rounds first let the promotion read the memory and then hold its
transaction (a test-only trigger in the private database sleeps after its insert) while
the others run: the interleaving a slow database or a busy machine produces now and then,
every time.
"""

import json
import threading

import pytest

from .conftest import ADMIN_PASSWORD, ADMINS, LOGS
from .harness import (
    HOLD_FUNCTION,
    Api,
    AppServer,
    ConsoleSession,
    chain_problems,
    ledger_problems,
    wait_until,
)
from .serial import Op, Row, canonical, outcomes

pytestmark = pytest.mark.reliability

ACTOR = "race-actor"
TARGET = "tenant:race"
FREE_ROUNDS = 24
HELD_ROUNDS = 6
HOLD = 0.5  # seconds the held promotion sleeps inside its transaction
REFUSALS = {403, 404, 422}
HOLD_TRIGGER = f"""
    CREATE TRIGGER reliability_hold_promote AFTER INSERT ON memory_core_memory
    FOR EACH ROW WHEN (NEW.text LIKE 'promoted %') EXECUTE FUNCTION reliability_hold('{HOLD}')
"""


@pytest.fixture(scope="module")
def race_app(app, private_pg, seeded):
    server = AppServer(private_pg, LOGS, workers=4)
    try:
        server.start()
        yield server
    finally:
        server.stop()


def round_ops(n: int, kinds: tuple[str, ...], retire_original: bool) -> list[Op]:
    texts = {
        "remember": f"agent again {n}",
        "correct": f"corrected {n}",
        "promote": f"promoted {n}",
        "forget": None,
    }
    return [Op(kind, texts[kind], retire_original and kind == "promote") for kind in kinds]


class Round:
    def __init__(self, app, api: Api, sessions: dict[str, ConsoleSession], n: int, ops: list[Op]):
        self.app, self.api, self.sessions, self.n, self.ops = app, api, sessions, n, ops
        self.key = f"policy-{n}"
        self.answers: dict[int, object] = {}

    def start(self) -> str:
        resp = self.api.remember(ACTOR, self.key, f"original {self.n}")
        assert resp.status == 201, resp
        self.memory = resp.json()["id"]
        return self.memory

    def call(self, index: int):
        op, uid = self.ops[index], self.memory
        a, b = self.sessions[ADMINS[0]], self.sessions[ADMINS[1]]
        if op.kind == "remember":
            resp = self.api.remember(ACTOR, self.key, op.text)
        elif op.kind == "correct":
            resp = a.post(f"/memories/{uid}/correct/", {"text": op.text})
        elif op.kind == "promote":
            form = {"target": TARGET, "text": op.text}
            if op.retire_original:
                form["retire_original"] = "on"
            resp = b.post(f"/memories/{uid}/republish/", form)
        else:  # forget, by either administrator
            resp = (a if self.n % 2 else b).post(
                f"/memories/{uid}/forget/", {"confirm_key": self.key}
            )
        self.answers[index] = resp

    def succeeded(self, index: int) -> bool | None:
        """True done, False refused, None an error (5xx, no answer, an unexpected status)."""
        resp, kind = self.answers.get(index), self.ops[index].kind
        if resp is None or resp.status is None:
            return None
        if kind == "remember":
            return True if resp.status == 201 else None
        if resp.status == 302:
            return True
        return False if resp.status in REFUSALS else None

    def final_rows(self, conn) -> list[Row]:
        rows = conn.execute(
            """
            SELECT m.uid, s.token, m.text, m.lineage::text, m.retired_at IS NULL,
                   m.retired_reason, sup.text, src.text
            FROM memory_core_memory m
            JOIN memory_core_scope s ON s.id = m.scope_id
            LEFT JOIN memory_core_memory sup ON sup.id = m.supersedes_id
            LEFT JOIN memory_core_memory src ON src.id = m.promoted_from_id
            WHERE m.key = %s AND s.token IN (%s, %s)
            """,
            [self.key, f"actor:race/{ACTOR}", TARGET],
        ).fetchall()
        return [
            Row("A" if token.startswith("actor:") else "T", text, lineage, live, reason, sup, src)
            for _, token, text, lineage, live, reason, sup, src in rows
        ]

    def judge(self, conn) -> list[str]:
        problems = []
        for index, op in enumerate(self.ops):
            if self.succeeded(index) is None:
                resp = self.answers.get(index)
                status = resp.status or resp.error if resp else "not sent"
                body = resp.body[:200] if resp else b""
                problems.append(f"round {self.n} {op.kind}: {status} {body!r}")
        rows = self.final_rows(conn)
        live = [(r.scope) for r in rows if r.live]
        for scope in ("A", "T"):
            if live.count(scope) > 1:
                problems.append(f"round {self.n}: {live.count(scope)} live rows at {scope}")
        if problems:
            return problems
        observed = (
            tuple(self.succeeded(i) for i in range(len(self.ops))),
            canonical(rows),
        )
        initial = [Row("A", f"original {self.n}", "lineage-original")]
        possible = outcomes(initial, self.ops, f"original {self.n}")
        if observed not in possible:
            problems.append(
                f"round {self.n}: no serial order of {[op.kind for op in self.ops]} gives "
                f"{observed[0]} with {sorted(observed[1], key=str)}"
            )
        return problems


def run_free(rnd: Round) -> None:
    barrier = threading.Barrier(len(rnd.ops))

    def go(index):
        barrier.wait(30)
        rnd.call(index)

    threads = [threading.Thread(target=go, args=(i,), daemon=True) for i in range(len(rnd.ops))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)


def run_held(rnd: Round, conn) -> None:
    """The promotion first, held inside its transaction; then the rest together."""
    promote = next(i for i, op in enumerate(rnd.ops) if op.kind == "promote")
    first = threading.Thread(target=rnd.call, args=(promote,), daemon=True)
    first.start()
    wait_until(
        lambda: conn.execute(
            "SELECT 1 FROM pg_stat_activity WHERE wait_event = 'PgSleep' "
            "AND datname = current_database()"
        ).fetchone(),
        timeout=30,
        interval=0.02,
        what="the promotion to be held",
    )
    rest = [i for i in range(len(rnd.ops)) if i != promote]
    barrier = threading.Barrier(len(rest))

    def go(index):
        barrier.wait(30)
        rnd.call(index)

    threads = [threading.Thread(target=go, args=(i,), daemon=True) for i in rest]
    for thread in threads:
        thread.start()
    for thread in [first, *threads]:
        thread.join(120)


HELD_SHAPES = [
    (("promote", "correct", "remember"), True),
    (("promote", "forget", "remember"), False),
    (("promote", "correct", "forget", "remember"), True),
]


def test_admins_and_agent_race_on_one_memory(race_app, seeded, private_pg, figures):
    api = Api(race_app.port, seeded["keys"]["race"], timeout=120)
    sessions = {}
    for name in ADMINS:
        sessions[name] = ConsoleSession(race_app.port, timeout=120)
        sessions[name].login(name, ADMIN_PASSWORD)
    problems, statuses, rounds = [], [], 0
    everything = ("promote", "correct", "forget", "remember")
    with private_pg.connect() as conn:
        for n in range(FREE_ROUNDS):
            rnd = Round(race_app, api, sessions, n, round_ops(n, everything, n % 2 == 1))
            rnd.start()
            run_free(rnd)
            problems += rnd.judge(conn)
            statuses += [r.status for r in rnd.answers.values()]
            rounds += 1
        conn.execute(HOLD_FUNCTION)
        conn.execute(HOLD_TRIGGER)
        try:
            for h in range(HELD_ROUNDS):
                n = FREE_ROUNDS + h
                kinds, retire = HELD_SHAPES[h % len(HELD_SHAPES)]
                rnd = Round(race_app, api, sessions, n, round_ops(n, kinds, retire))
                rnd.start()
                run_held(rnd, conn)
                problems += rnd.judge(conn)
                statuses += [r.status for r in rnd.answers.values()]
                rounds += 1
        finally:
            conn.execute("DROP TRIGGER IF EXISTS reliability_hold_promote ON memory_core_memory")
        chains = chain_problems(conn)
        ledger = ledger_problems(conn)
    verified = race_app.manage("verify_ledger")
    counts: dict[str, int] = {}
    for status in statuses:
        counts[str(status)] = counts.get(str(status), 0) + 1
    figures.record(
        "admin_races",
        rounds=rounds,
        held_rounds=HELD_ROUNDS,
        requests=len(statuses) + rounds,
        writes_verified=rounds,
        probes=rounds,
        statuses=counts,
        problems=len(problems),
        verify_ledger=verified.stdout.strip(),
        summary=(
            f"{rounds} rounds of promote/correct/forget/remember on one memory "
            f"({HELD_ROUNDS} held), answers {counts}, {len(problems)} problems"
        ),
    )
    assert not problems, json.dumps(problems[:10], indent=2)
    assert not chains, chains[:10]
    assert not ledger, ledger[:10]
    assert verified.returncode == 0, verified.stdout + verified.stderr


def fire_together(calls) -> list:
    """Run the calls at once (a barrier), return their answers in order."""
    barrier = threading.Barrier(len(calls))
    answers = [None] * len(calls)

    def go(i):
        barrier.wait(30)
        answers[i] = calls[i]()

    threads = [threading.Thread(target=go, args=(i,), daemon=True) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    return answers


def test_agents_register_one_actor_at_once(race_app, seeded, private_pg, figures):
    """Hosts often send their first calls for a new user together: eight first turns and
    remembers for one unknown actor at once register it once, and none fails. And when two
    tenants' keys race to register the same new ref, each tenant gets its own actor (names
    are per tenant): every call is served, and no chain ever holds the other's scope."""
    api = Api(race_app.port, seeded["keys"]["race"], timeout=120)
    other = Api(race_app.port, seeded["keys"]["crash"], timeout=120)
    bad, leaks, requests = [], [], 0
    for n in range(8):
        actor = f"newcomer-{n}"
        answers = fire_together(
            [
                (lambda i=i, a=actor: api.remember(a, f"first-{i}", f"first fact {i}"))
                if i % 2
                else (lambda i=i, a=actor: api.turn(a, f"first-run-{i}"))
                for i in range(8)
            ]
        )
        requests += len(answers)
        bad += [
            f"{actor}: {a.status or a.error} {a.body[:150]!r}"
            for a in answers
            if a.status not in (200, 201)
        ]
    for n in range(6):
        actor = f"contested-{n}"
        keys = [api, other] * 4
        answers = fire_together([(lambda k=k, a=actor: k.turn(a, "first-run")) for k in keys])
        requests += len(answers)
        bad += [
            f"{actor}: {a.status or a.error} {a.body[:150]!r}" for a in answers if a.status != 200
        ]
        for k, a in zip(keys, answers, strict=True):
            tenant = "race" if k is api else "crash"
            if a.status == 200 and json.loads(a.body)["scopes"][0] != f"actor:{tenant}/{actor}":
                leaks.append(f"{actor}: {tenant}'s call was served another tenant's actor")
    with private_pg.connect() as conn:
        registered = conn.execute(
            "SELECT count(*) FROM memory_core_actor WHERE ref LIKE 'race/newcomer-%'"
        ).fetchone()[0]
        chains = conn.execute(
            """
            SELECT a.ref, array_agg(s.token ORDER BY m.rank) FROM memory_core_actor a
            JOIN memory_core_membership m ON m.actor_id = a.id
            JOIN memory_core_scope s ON s.id = m.scope_id
            WHERE a.ref LIKE '%/contested-%' GROUP BY a.ref
            """
        ).fetchall()
    leaks += [
        f"{ref}: chain {tokens}"
        for ref, tokens in chains
        if tokens != [f"tenant:{ref.split('/')[0]}"]
    ]
    figures.record(
        "concurrent_registration",
        requests=requests,
        probes=requests,
        failed=len(bad),
        cross_tenant=len(leaks),
        summary=(
            f"{requests} first calls for 14 new actors, 8 at a time (6 contested by two "
            f"tenants): {len(bad)} failed, {len(leaks)} served across tenants"
        ),
    )
    assert not leaks, leaks
    assert not bad, json.dumps(bad[:10], indent=2)
    assert registered == 8
    assert len(chains) == 12  # each contested ref once in each tenant
