"""Second copies of a rule, held to the rule over generated organisations (tests/worlds.py).

Four rules are answered twice, for speed:

- the chain: `chain.resolve_chain` (through `actors.chain_of`) is the rule;
  `memory_core_chains` and `memory_core_chains_holding` (rules/chain.sql) answer it in the
  database for many actors at once, forwards (an actor's scopes, ranked) and backwards (whose
  chain holds a scope);
- precedence: `precedence.resolve` over one actor's chain is the rule (turns, read-back, the
  actor page); `memory_core_chain_conflicts` (rules/precedence.sql) restates it for many
  chains at once, and is what the summaries' triggers keep and the conflicts page reads
  (`conflicts.conflicts`);
- selection: `selection.select` over `precedence.resolve`d entries is the rule for what a
  turn shows; `applied.chain_selection` restates both in one SQL statement for a turn
  without a query (only the kept keys' rows leave the database), and
  `search.ranked_selection` for a turn with one (the keys `search.ranked_chain` ranks
  taken after the pinned ones);
- reach: `permissions.role_for` answers for one scope; `permissions.readable_scope_roles`
  answers for every scope at once, in one recursive query.

The oracle is the pure function (or the per-scope one), never the copy under test.
"""

from collections import Counter, defaultdict

import pytest
from django.db import connection
from django.utils import timezone
from hypothesis import HealthCheck, given, settings

from memory_core.accounts.permissions import readable_scope_roles, role_for
from memory_core.actors import chain_of
from memory_core.applied import chain_selection, shape_rows, shown_ids
from memory_core.conflicts import AUTHOR_COMBINATIONS, conflicts
from memory_core.models import Actor, Memory, Scope
from memory_core.recall import search
from memory_core.rules.chain import chain_rank
from memory_core.rules.facts import Record
from memory_core.rules.precedence import resolve
from memory_core.rules.selection import select
from tests.worlds import MEMORY_KEYS, World, worlds

# slow: a generated world per example, each rule asked of both copies.
pytestmark = pytest.mark.slow

EXAMPLES = settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
EVERYTHING = 100_000  # a page size larger than any generated world


def live_records() -> list[Record]:
    """Every live memory as the pure rules take it (expiry is precedence's to apply)."""
    return [
        Record(m.uid, m.scope.token, m.key, m.text, m.author, m.pinned, m.created_at, m.expires_at)
        for m in Memory.objects.filter(retired_at=None).select_related("scope")
    ]


def resolved_pairs(actor, records, now, *, duplicates=False) -> list[tuple[str, str, str]]:
    """(winner id, beaten id, authors) for every value the actor's winner of a key beats,
    in the conflicts page's order: an agent over a person first, then key, then chain order.
    Only the pairs whose texts differ (conflicts), or with duplicates=True those whose
    texts are the same (duplicates)."""
    chain = chain_of(actor)
    rank = chain_rank(chain)
    pairs = [
        (entry.winner, beaten)
        for entry in resolve(records, chain, now=now)
        for beaten in entry.overrides
        if (entry.winner.text == beaten.text) == duplicates
    ]
    pairs.sort(
        key=lambda p: (
            f"{p[0].author}>{p[1].author}" != "agent>human",
            p[0].key,
            rank[p[0].scope],
            rank[p[1].scope],
        )
    )
    return [(w.id, b.id, f"{w.author}>{b.author}") for w, b in pairs]


def as_pairs(page) -> list[tuple[str, str, str]]:
    return [(c.narrow.uid, c.wide.uid, c.authors) for c in page]


def _rows(sql: str, params) -> list:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


@EXAMPLES
@given(spec=worlds())
def test_the_chain_in_sql_is_chain_of_for_every_actor_forwards_and_backwards(db, operator, spec):
    World(spec, operator)
    actors = list(Actor.objects.select_related("scope"))
    token = dict(Scope.objects.values_list("id", "token"))
    ranked = _rows(
        "SELECT actor_id, scope_id FROM memory_core_chains(%s) ORDER BY actor_id, rank",
        [[a.id for a in actors] * 2],  # an actor named twice is one chain
    )
    chains = defaultdict(list)
    for actor_id, scope_id in ranked:
        chains[actor_id].append(token[scope_id])
    assert {a.id: tuple(chains[a.id]) for a in actors} == {a.id: chain_of(a) for a in actors}
    holding = _rows(
        "SELECT DISTINCT scope_id, actor_id FROM memory_core_chains_holding(%s)", [list(token)]
    )
    assert set(holding) == {
        (scope_id, a.id) for a in actors for scope_id in token if token[scope_id] in chain_of(a)
    }


@EXAMPLES
@given(spec=worlds(duplicates=True))
def test_the_precedence_function_pairs_what_resolve_pairs_in_every_chain(db, operator, spec):
    """Over every key of each chain (a chain changed), and over given (actor, key)s (a value
    changed), as the summaries' triggers ask."""
    World(spec, operator)
    records, now = live_records(), timezone.now()
    actors = list(Actor.objects.select_related("scope"))
    expected = {
        (actor.id, *pair, duplicate)
        for actor in actors
        for duplicate in (False, True)
        for pair in resolved_pairs(actor, records, now, duplicates=duplicate)
    }
    pairs = """
        SELECT c.actor_id, n.uid, w.uid, c.authors, c.duplicate
        FROM memory_core_chain_conflicts(%s, %s, %s) c
        JOIN memory_core_memory n ON n.id = c.narrow_id
        JOIN memory_core_memory w ON w.id = c.wide_id
    """
    every_key = _rows(pairs, [[a.id for a in actors], None, now])
    assert len(every_key) == len(set(every_key))
    assert set(every_key) == expected
    wanted = [(a.id, key) for a in actors for key in MEMORY_KEYS]
    given_keys = _rows(pairs, [[a for a, _ in wanted], [k for _, k in wanted], now])
    assert sorted(given_keys) == sorted(every_key)


@EXAMPLES
@given(spec=worlds(duplicates=True))
def test_the_conflicts_query_says_what_precedence_says_for_every_actor(db, operator, spec):
    world = World(spec, operator)
    records, now = live_records(), timezone.now()
    expected: Counter = Counter()
    for actor in Actor.objects.select_related("scope"):
        mine = resolved_pairs(actor, records, now)
        expected.update(mine)
        if actor in world.actors:
            # One actor's conflicts (reach = its own scope, which no other chain holds),
            # pair for pair and in the page's order.
            page, total = conflicts(reach_tokens=[actor.scope.token], limit=EVERYTHING)
            assert as_pairs(page) == mine, actor.ref
            assert total == len(mine)
            assert all(c.actors == 1 for c in page)
    # Every actor at once: each pair once, counted in every chain where it is a conflict.
    doubled: Counter = Counter()
    for actor in Actor.objects.select_related("scope"):
        doubled.update(resolved_pairs(actor, records, now, duplicates=True))
    page, total = conflicts(duplicates=True, limit=EVERYTHING)
    assert {(c.narrow.uid, c.wide.uid, c.authors): c.actors for c in page} == dict(doubled)
    assert total == len(doubled) and all(c.duplicate for c in page)
    page, total = conflicts(limit=EVERYTHING)
    assert {(c.narrow.uid, c.wide.uid, c.authors): c.actors for c in page} == dict(expected)
    assert total == len(expected) == len(page)
    for authors in AUTHOR_COMBINATIONS:
        page, _ = conflicts(authors=authors, limit=EVERYTHING)
        assert {(c.narrow.uid, c.wide.uid) for c in page} == {
            (n, w) for n, w, a in expected if a == authors
        }
    shown = Memory.objects.filter(uid__in={uid for pair in expected for uid in pair[:2]})
    scope_of = dict(shown.values_list("uid", "scope__token"))
    for scope in world.scopes:
        page, _ = conflicts(scope=scope, limit=EVERYTHING)
        assert {(c.narrow.uid, c.wide.uid) for c in page} == {
            (n, w) for n, w, _ in expected if scope.token in (scope_of[n], scope_of[w])
        }


@EXAMPLES
@given(spec=worlds(duplicates=True))
def test_the_turns_selection_in_sql_keeps_what_select_keeps(db, operator, spec):
    World(spec, operator)
    records, now = live_records(), timezone.now()
    for actor in Actor.objects.all():
        chain = chain_of(actor)
        entries = resolve(records, chain, now=now)
        pinned = sum(e.pinned for e in entries)
        # Every budget from none to more than there is, and the one where pins overflow.
        for budget in sorted({0, 1, 2, 3, max(pinned - 1, 0), len(entries), len(entries) + 1}):
            expected = select(entries, chain, budget)
            got, shapes = chain_selection(chain, budget)
            assert got.kept == expected.kept, (actor.ref, budget)
            assert got.stats == expected.stats, (actor.ref, budget)
            # What the API shows of each, as the separate read would have said.
            shown = shown_ids(expected.kept)
            assert shapes == (shape_rows(shown) if shown else {}), (actor.ref, budget)


@EXAMPLES
@given(spec=worlds(duplicates=True))
def test_a_turn_with_a_query_keeps_what_select_keeps_with_the_ranked_keys(db, operator, spec):
    World(spec, operator)
    records, now = live_records(), timezone.now()
    # A key's words, a stored fact's words, and words nothing holds (the later tiers).
    queries = [MEMORY_KEYS[0].replace("_", " "), "zqx vwk"]
    queries += [r.text for r in records[:2]]
    for actor in Actor.objects.all():
        chain = chain_of(actor)
        entries = resolve(records, chain, now=now)
        pinned = sum(e.pinned for e in entries)
        for query in queries:
            for budget in sorted({0, 1, 3, max(pinned - 1, 0), len(entries) + 1}):
                _, ranked, _ = search.ranked_chain(chain, query, budget)
                expected = select(entries, chain, budget, ranked)
                got, shapes = search.ranked_selection(chain, query, budget)
                assert got.kept == expected.kept, (actor.ref, query, budget)
                assert got.stats == expected.stats, (actor.ref, query, budget)
                shown = shown_ids(expected.kept)
                assert shapes == (shape_rows(shown) if shown else {}), (actor.ref, budget)


@EXAMPLES
@given(spec=worlds())
def test_readable_scope_roles_is_role_for_on_every_scope(db, operator, spec):
    world = World(spec, operator)
    for user in world.users:
        readable = readable_scope_roles(user)
        if user.is_superuser:
            assert readable is None
            assert all(role_for(user, scope) == "admin" for scope in world.scopes)
            continue
        for scope in world.scopes:
            assert readable.get(scope.id) == role_for(user, scope), (user.username, scope.token)
