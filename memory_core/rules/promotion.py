"""Where a fact that many people's agents concluded is proposed for publishing.

The people who hold the fact are proposed once, at the narrowest scope that covers them
all: a scope every one of them holds in their chain, and, of those, the one that comes
first in their chains. A wider scope is proposed only when the people span several
narrower ones (two teams of one tenant, or people in no common team): five members of
`team:acme/ops` are proposed at the team, never also at `tenant:acme`, so one piece of
evidence is never in two proposals (two proposals for the same people, one at the team and
one at the tenant, would each ask a person to decide the same fact, and approving both
would publish it twice).

People with no scope in common (say, members of two teams outside any tenant) fall apart
into the widest groups that do share one; a person who would fall in two such groups is
proposed in the larger one only.

Pure: chains in, placements out; `detect.promotions` feeds it rows from the database.
"""

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# A person (an actor's row id, or a name in the tests) -> the scopes of their chain that may
# receive a promotion (row ids or tokens), narrowest first.
Chains = Mapping[Any, Sequence[Any]]


@dataclass(frozen=True)
class Placement:
    scope: Any  # a scope (its token, or its row id): whatever the chains hold
    people: frozenset[Any]  # who hold the fact and are proposed here


def _positions(chains: Chains, people: Collection[Any]) -> list[dict[Any, int]]:
    return [{scope: n for n, scope in reversed(list(enumerate(chains[p])))} for p in people]


def narrowest_cover(chains: Chains, people: Collection[Any]) -> Any | None:
    """The scope that all of `people` hold which is narrowest for them: the one whose latest
    place in their chains (narrowest first) is earliest, then the smallest sum of places,
    then the smallest scope (so the answer never depends on the order of the input). None
    when they hold no scope in common.

    Whenever one common scope comes before another in every chain, it is the narrower, and
    its latest place is earlier: the second is never chosen over it."""
    positions = _positions(chains, people)
    if not positions:
        return None
    common = set(positions[0]).intersection(*positions[1:])
    if not common:
        return None
    return min(
        common,
        key=lambda scope: (
            max(place[scope] for place in positions),
            sum(place[scope] for place in positions),
            scope,
        ),
    )


def promotion_scopes(chains: Chains, min_people: int) -> list[Placement]:
    """Where to propose publishing a fact held by the people in `chains`.

    `chains`: each person who holds the fact, with the scopes of their chain that may receive
    a promotion (teams and tenants), narrowest first. Returns the placements, each with at
    least `min_people` people and no person in two of them; when the people share a scope,
    that is one placement of them all, at their narrowest common scope.
    """
    holders: dict[Any, set[Any]] = {}
    for person, chain in chains.items():
        for scope in chain:
            holders.setdefault(scope, set()).add(person)
    groups = {frozenset(people) for people in holders.values()}
    # The widest groups that share a scope: a group inside another (a team's members inside
    # their tenant's) is proposed with it, at the cover of the whole.
    widest = [group for group in groups if not any(group < other for other in groups)]
    widest.sort(key=lambda group: (-len(group), sorted(group)))
    placed: list[Placement] = []
    taken: set[Any] = set()
    for group in widest:
        rest = group - taken
        if not rest or len(rest) < min_people:
            continue
        # Never None: the scope `group` shares is held by every one of `rest` too.
        scope = narrowest_cover(chains, rest)
        taken |= rest
        placed.append(Placement(scope, frozenset(rest)))
    return placed


def promoted_tags(replaced: Sequence[str], copy: Sequence[str]) -> list[str]:
    """The tags of a promotion's new value: those of the value it replaces (none when it
    replaces nothing) first, then the copy's. A replaced policy keeps its tags (`finance`
    is how people find it); the agents' copy seldom has any."""
    return list(dict.fromkeys([*replaced, *copy]))
