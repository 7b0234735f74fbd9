"""Second copies of a rule, held to the rule over generated organisations (tests/worlds.py).

Three rules are answered twice, for speed:

- precedence: `precedence.resolve` over one actor's chain is the rule (turns, read-back, the
  actor page); `conflicts.conflicts` restates it in one SQL statement for every actor at
  once (DISTINCT ON the narrowest rank, `global` at rank 32767);
- selection: `selection.select` over `precedence.resolve`d entries is the rule for what a
  turn shows; `applied.chain_selection` restates both in one SQL statement for a turn
  without a query (only the kept keys' rows leave the database);
- reach: `permissions.role_for` answers for one scope; `permissions.readable_scope_roles`
  answers for every scope at once, in one recursive query.

The oracle is the pure function (or the per-scope one), never the copy under test.
"""

from collections import Counter

from django.utils import timezone
from hypothesis import HealthCheck, given, settings

from memory_core.accounts.permissions import readable_scope_roles, role_for
from memory_core.actors import chain_of
from memory_core.applied import chain_selection, shape_rows, shown_ids
from memory_core.conflicts import AUTHOR_COMBINATIONS, conflicts
from memory_core.models import Actor, Memory
from memory_core.rules.chain import chain_rank
from memory_core.rules.facts import Record
from memory_core.rules.precedence import resolve
from memory_core.rules.selection import select
from tests.worlds import World, worlds

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
