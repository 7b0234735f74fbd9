"""The kept summaries: live counts per scope and conflicts per actor and key, which the
triggers of models/maintained.py keep in every write's own transaction (their functions in
models/maintained.sql), equal what recomputing them from the memories gives, after every
kind of write, over generated organisations (tests/worlds.py).

Two oracles: a GROUP BY over the memories for the counts, and for the conflicts both a
fresh resolution of every chain (memory_core_chain_conflicts of rules/precedence.sql over
every actor, which is what the kept rows must be) and, through the conflicts page's query,
precedence.resolve itself (tests/test_rule_copies.py's oracle), so a maintenance bug and a
resolution bug are both caught.
"""

import json
import tempfile
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_core import bulk, curation, erasure, forgetting, undo, writes
from memory_core.conflicts import conflicts
from memory_core.errors import DomainError
from memory_core.models import Actor, ChainConflict, Memory, ScopeCount
from memory_core.rules.ids import memory_id
from memory_core.summaries import live_counts
from tests.test_rule_copies import EVERYTHING, live_records, resolved_pairs
from tests.worlds import MEMORY_KEYS, World, worlds

EXAMPLES = settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

WRITES = [
    "remember",
    "publish",
    "publish-expired",
    "correct",
    "invalidate",
    "reinstate",
    "revert",
    "pin",
    "unpin",
    "promote",
    "forget",
    "erase",
    "bulk-invalidate",
    "bulk-forget",
    "set-wise-retire",
    "retire-and-insert",
    "import",
    "memberships",
    "expire",
]


def _rows(sql: str) -> list:
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return sorted(cursor.fetchall())


def _held_counts() -> set:
    return set(
        _rows(
            """SELECT scope_id, count(*), count(*) FILTER (WHERE author = 'agent'),
                      count(*) FILTER (WHERE pinned)
               FROM memory_core_memory WHERE retired_at IS NULL GROUP BY scope_id"""
        )
    )


def _kept_counts() -> set:
    rows = ScopeCount.objects.exclude(held=0, agent=0, pinned=0)
    return set(rows.values_list("scope_id", "held", "agent", "pinned"))


def _live_counts_recomputed() -> dict:
    out: dict = {}
    for scope_id, author, pinned in Memory.objects.live().values_list(
        "scope_id", "author", "pinned"
    ):
        live, agent, pins = out.get(scope_id, (0, 0, 0))
        out[scope_id] = (live + 1, agent + (author == "agent"), pins + pinned)
    return out


COLUMNS = (
    "actor_id, key, narrow_id, wide_id, narrow_scope_id, wide_scope_id, narrow_rank, "
    "wide_rank, authors, duplicate"
)
PAIR_COLUMNS = (
    "narrow_id, wide_id, key, narrow_scope_id, wide_scope_id, authors, agent_over_human, "
    "duplicate, actors, narrow_rank, wide_rank"
)


def _kept_conflicts() -> list:
    return _rows(f"SELECT {COLUMNS} FROM memory_core_chainconflict")


def _resolved_conflicts() -> list:
    """Every chain resolved afresh (rules/precedence.sql), over held values."""
    return _rows(
        f"SELECT {COLUMNS} FROM memory_core_chain_conflicts("
        "ARRAY(SELECT id FROM memory_core_actor), NULL, NULL)"
    )


def _kept_pairs() -> list:
    return _rows(f"SELECT {PAIR_COLUMNS} FROM memory_core_conflictpair")


def _grouped_pairs() -> list:
    return _rows(
        """SELECT narrow_id, wide_id, key, narrow_scope_id, wide_scope_id, authors,
                  authors = 'agent>human', duplicate, count(*), min(narrow_rank),
                  min(wide_rank)
           FROM memory_core_chainconflict
           GROUP BY narrow_id, wide_id, key, narrow_scope_id, wide_scope_id, authors,
                    duplicate"""
    )


def assert_kept_equals_recomputed():
    assert _kept_counts() == _held_counts()
    counts = {sid: (c.live, c.agent, c.pinned) for sid, c in live_counts().items()}
    assert counts == _live_counts_recomputed()
    assert _kept_conflicts() == _resolved_conflicts()
    assert _kept_pairs() == _grouped_pairs()
    # And the page's reading of the kept rows is precedence's (expiry applied at read time).
    records, now = live_records(), timezone.now()
    expected: dict = {}
    for actor in Actor.objects.select_related("scope"):
        for pair in resolved_pairs(actor, records, now):
            expected[pair] = expected.get(pair, 0) + 1
    page, total = conflicts(limit=EVERYTHING)
    assert {(c.narrow.uid, c.wide.uid, c.authors): c.actors for c in page} == expected
    assert total == len(expected)


def _pick(rows, n):
    rows = list(rows)
    return rows[n % len(rows)] if rows else None


def _write(world: World, kind: str, n: int, key: str, operator) -> None:
    """One write of `kind`, through the service that makes it (or the statement a bulk
    path runs); a refusal (DomainError) leaves nothing behind, which is checked too."""
    live = Memory.objects.filter(retired_at=None).order_by("id")
    every_actor = world.actors
    now = timezone.now()
    if kind == "remember" and every_actor:
        actor = every_actor[n % len(every_actor)]
        writes.remember(actor, key, f"agent says {n}", principal=operator)
    elif kind in ("publish", "publish-expired"):
        scope = world.scopes[n % len(world.scopes)]
        expiry = now - timedelta(seconds=1) if kind == "publish-expired" else None
        if expiry is not None:
            # What the clock does: published to expire, and the moment has passed.
            memory = writes.publish(scope, key, f"person says {n}", principal=operator)
            Memory.objects.filter(pk=memory.pk).update(expires_at=expiry)
        else:
            writes.publish(scope, key, f"person says {n}", principal=operator)
    elif kind == "correct" and (memory := _pick(live, n)):
        writes.correct(memory, f"corrected {n} {memory.text}"[:200], principal=operator)
    elif kind == "invalidate" and (memory := _pick(live, n)):
        curation.invalidate(memory, "wrong", principal=operator)
    elif kind == "reinstate":
        gone = Memory.objects.filter(retired_reason="invalidated").order_by("id")
        if memory := _pick(gone, n):
            undo.reinstate(memory, principal=operator)
    elif kind == "revert":
        older = Memory.objects.filter(retired_reason="superseded").order_by("id")
        if (old := _pick(older, n)) and (
            current := Memory.objects.filter(lineage=old.lineage, retired_at=None).first()
        ):
            undo.revert(current, old, principal=operator)
    elif kind in ("pin", "unpin") and (memory := _pick(live.filter(pinned=kind == "unpin"), n)):
        curation.set_pinned(memory, kind == "pin", principal=operator)
    elif kind == "promote" and (memory := _pick(live, n)):
        targets = writes.promotion_targets(memory)
        if targets:
            writes.promote(
                memory, targets[n % len(targets)], principal=operator, retire_original=n % 2 == 0
            )
    elif kind == "forget" and (memory := _pick(Memory.objects.order_by("id"), n)):
        forgetting.forget(memory, principal=operator)
    elif kind == "erase" and every_actor:
        erasure.erase_actor(every_actor[n % len(every_actor)], principal=operator)
    elif kind in ("bulk-invalidate", "bulk-forget"):
        uids = list(live.values_list("uid", flat=True)[n % 3 :: 3][:4])
        if uids:
            bulk.run(
                kind.removeprefix("bulk-"),
                uids,
                principal=operator,
                lookup=lambda uid: Memory.objects.get(uid=uid),
                reason="bulk says wrong",
            )
    elif kind == "set-wise-retire":
        # One statement retiring several rows (what a bulk path or a migration might run).
        ids = list(live.values_list("id", flat=True)[n % 2 :: 2][:5])
        Memory.objects.filter(id__in=ids).update(
            retired_at=now, retired_reason="invalidated", retired_by="test"
        )
    elif kind == "retire-and-insert" and (memory := _pick(live, n)):
        # One statement that retires a live row and inserts a row, as a remember replacing a
        # value does (writes.sql): at the same key (the update trigger leaves it to the
        # insert's) or, every other time, at another key of the scope (it must not).
        other = MEMORY_KEYS[(MEMORY_KEYS.index(memory.key) + 1) % len(MEMORY_KEYS)]
        with connection.cursor() as cursor:
            cursor.execute(
                """WITH retired AS (
                       UPDATE memory_core_memory
                       SET retired_at = now(), retired_reason = 'superseded', retired_by = 'test'
                       WHERE id = %s RETURNING id, scope_id, lineage
                   )
                   INSERT INTO memory_core_memory
                       (uid, scope_id, key, text, pinned, tags, author, origin_user, lineage,
                        created_at, retired_reason, retired_note, retired_by, supersedes_id)
                   SELECT %s, r.scope_id, %s, %s, false, '{}', 'human', 'test', r.lineage,
                          now(), '', '', '', r.id
                   FROM retired r
                   WHERE NOT EXISTS (
                       SELECT 1 FROM memory_core_memory m WHERE m.scope_id = r.scope_id
                       AND m.key = %s AND m.retired_at IS NULL AND m.id <> r.id)""",
                [
                    memory.pk,
                    memory_id(),
                    memory.key if n % 2 == 0 else other,
                    f"replaced {n}",
                    memory.key if n % 2 == 0 else other,
                ],
            )
    elif kind == "import":
        scope = _pick([s for s in world.scopes if not s.token.startswith("actor:")], n)
        lines = [
            {"scope": scope.token, "key": k, "text": f"imported {n} {k}", "pinned": n % 2 == 0}
            for k in MEMORY_KEYS[: 1 + n % 3]
        ]
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
            f.write("\n".join(json.dumps(line) for line in lines))
        call_command("import_memories", f.name, stdout=open("/dev/null", "w"))
    elif kind == "memberships" and every_actor:
        _replace_memberships(world, every_actor[n % len(every_actor)], n)
    elif kind == "expire" and (memory := _pick(live, n)):
        Memory.objects.filter(pk=memory.pk).update(expires_at=now - timedelta(seconds=1))


def _replace_memberships(world: World, actor: Actor, n: int) -> None:
    """put_actor's own path (actors._set_memberships): the memberships replaced by another
    choice of its tenant's teams, then the tenant (or, outside every tenant, its team)."""
    from memory_core.actors import _set_memberships

    own = actor.scope.token.removeprefix("actor:")
    tenant = own.split("/")[0] if "/" in own else None
    if tenant is None:
        wider = [s for s in world.scopes if s.token.startswith("team:") and "/" not in s.token]
    else:
        teams = [s for s in world.scopes if s.token.startswith(f"team:{tenant}/")][n % 2 :: 2]
        tenants = [s for s in world.scopes if s.token == f"tenant:{tenant}"]
        wider = tenants + teams if n % 2 == 0 else teams[::-1] + tenants
    if wider:
        _set_memberships(actor, wider)


@pytest.mark.slow  # a generated world and a run of writes per example
@EXAMPLES
@given(
    spec=worlds(duplicates=True),
    steps=st.lists(
        st.tuples(st.sampled_from(WRITES), st.integers(0, 1000), st.sampled_from(MEMORY_KEYS)),
        min_size=1,
        max_size=6,
    ),
)
def test_kept_counts_and_conflicts_equal_the_recomputed_after_every_write(
    db, operator, spec, steps
):
    world = World(spec, operator)
    assert_kept_equals_recomputed()
    for kind, n, key in steps:
        try:
            with transaction.atomic():
                _write(world, kind, n, key, operator)
        except DomainError:
            pass
        assert_kept_equals_recomputed()


@pytest.mark.parametrize("kind", WRITES)
def test_each_kind_of_write_keeps_the_summaries(db, operator, org, kind):
    """Every kind of write at least once on a fixed organisation (Hypothesis may not draw
    each kind every run)."""
    world = World({"tenants": [], "loner": False, "notes": [], "users": [], "shared": []}, operator)
    world.actors = [org.u1, org.u2, org.x9]
    world.scopes += [org.acme, org.ops, org.globex, org.u1.scope, org.u2.scope, org.x9.scope]
    for n, scope in enumerate([org.root, org.acme, org.ops]):
        writes.publish(scope, "tone", f"tone {n}", principal=operator)
    writes.remember(org.u1, "tone", "agent tone", principal=operator)
    writes.remember(org.u2, "units", "agent units", principal=operator)
    writes.publish(org.acme, "tone", "tone again", principal=operator, pinned=True)
    wrong = writes.publish(org.ops, "units", "miles", principal=operator)
    curation.invalidate(wrong, "wrong", principal=operator)
    assert_kept_equals_recomputed()
    refused, changed = 0, False
    for n in range(3):
        before = _state()
        try:
            with transaction.atomic():
                _write(world, kind, n, "tone", operator)
        except DomainError:
            refused += 1
        assert_kept_equals_recomputed()
        changed |= _state() != before
    assert refused < 3 and changed, f"{kind} never wrote"


def _state():
    return (
        list(Memory.objects.order_by("id").values_list("id", "retired_at", "pinned", "expires_at")),
        list(
            Actor.objects.values_list("id", "memberships__scope_id").order_by(
                "id", "memberships__rank"
            )
        ),
    )


def test_the_server_role_may_read_the_kept_tables_but_never_write_them(db, org, operator):
    """Raw SQL as the server's role cannot make the summaries disagree with the memories:
    it holds SELECT only; the triggers that write them run as the owner."""
    from tests import roles

    if not roles.app_role():
        pytest.skip("the tests run as one role")
    writes.publish(org.acme, "tone", "calm", principal=operator)
    assert ScopeCount.objects.filter(scope=org.acme, held=1).exists()
    statements = [
        "UPDATE memory_core_scopecount SET held = held + 1",
        "DELETE FROM memory_core_scopecount",
        "INSERT INTO memory_core_scopecount (scope_id, held, agent, pinned) VALUES (-1, 1, 0, 0)",
        "DELETE FROM memory_core_chainconflict",
        "UPDATE memory_core_chainconflict SET duplicate = NOT duplicate",
        "DELETE FROM memory_core_conflictpair",
    ]
    for statement in statements:
        with pytest.raises(DatabaseError, match="permission denied"):
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(statement)
    assert ScopeCount.objects.filter(scope=org.acme, held=1).exists()
    assert ChainConflict.objects.count() == len(_resolved_conflicts())


def _errors_of_threads(*works) -> list:
    """Run each of `works` in a thread of its own (each closing its own connection) and
    wait for all: the exceptions they raised."""
    import threading

    from django.db import connection as conn

    errors = []

    def run(work):
        try:
            work()
        except Exception as error:  # noqa: BLE001 - reported by the caller's assertion
            errors.append(error)
        finally:
            conn.close()

    threads = [threading.Thread(target=run, args=(work,)) for work in works]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def test_concurrent_writes_to_shared_chains_keep_the_summaries_exact(transactional_db, org):
    """A person publishing at the tenant and team while agents remember the same key for
    two actors of both: every write succeeds (the maintenance locks an actor's chain, and
    pair counts are increments) and the kept tables end equal to the recomputed ones."""
    from memory_core.accounts.principals import Principal

    person = Principal.system("cli:test")

    def people():
        for n in range(8):
            writes.publish([org.acme, org.ops][n % 2], "tone", f"policy {n}", principal=person)

    def agents():
        for n in range(8):
            actor = [org.u1, org.u2][n % 2]
            writes.remember(actor, "tone", f"note {n}", principal=person)

    assert _errors_of_threads(people, agents, people) == []
    assert _kept_counts() == _held_counts()
    assert _kept_conflicts() == _resolved_conflicts()
    assert _kept_pairs() == _grouped_pairs()


@pytest.mark.parametrize("first", ["publish", "remember"])
def test_a_key_new_to_a_chain_written_while_a_wider_write_of_it_is_open_is_a_conflict(
    transactional_db, org, first
):
    """An agent's first value of a key, and a person's value of it at the agent's team, in
    two transactions that overlap: whichever commits second still finds the other's value,
    so the conflict is kept. The maintenance skips a key held once in a chain, and decides
    that only after it holds the chain's lock (models/maintained.sql): decided before, the
    second writer would see one value (the other's still uncommitted) and skip the pair."""
    import threading
    import time

    from memory_core.accounts.principals import Principal

    person = Principal.system("cli:test")
    started = threading.Event()

    def publish():
        writes.publish(org.ops, "tone", "policy", principal=person)

    def remember():
        writes.remember(org.u1, "tone", "note", principal=person)

    write_first, write_second = (publish, remember) if first == "publish" else (remember, publish)

    def hold_open():
        try:
            with transaction.atomic():
                write_first()
                started.set()
                time.sleep(0.5)  # the second writer's maintenance waits on u1's chain
        finally:
            started.set()

    def write_after():
        started.wait(10)
        write_second()

    assert _errors_of_threads(hold_open, write_after) == []
    kept = ChainConflict.objects.filter(actor=org.u1, key="tone")
    assert kept.count() == 1
    assert _kept_conflicts() == _resolved_conflicts()
    assert _kept_pairs() == _grouped_pairs()
