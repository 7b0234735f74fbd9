"""Where a fact many people's agents hold is proposed for publishing: once, at the narrowest
scope that covers the people. No database.

The examples are the cases people meet (a team, two teams of a tenant, a team and a person
outside it, teams outside every tenant); the properties hold the rule over generated
memberships: every placement's scope is held by all its people and no scope narrower in
their chains is, no person is in two placements, each has at least the minimum, and people
who share a scope are one placement.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core.rules.promotion import narrowest_cover, promoted_tags, promotion_scopes

OPS, SALES, ACME = "team:acme/ops", "team:acme/sales", "tenant:acme"


def placed(chains, min_people=3):
    return {(p.scope, p.people) for p in promotion_scopes(chains, min_people)}


def test_five_members_of_one_team_are_proposed_at_the_team_only():
    chains = {f"u{n}": [OPS, ACME] for n in range(5)}
    assert placed(chains) == {(OPS, frozenset(chains))}


def test_members_of_two_teams_of_a_tenant_are_proposed_at_the_tenant_only():
    chains = {"u1": [OPS, ACME], "u2": [OPS, ACME], "u3": [SALES, ACME], "u4": [SALES, ACME]}
    assert placed(chains) == {(ACME, frozenset(chains))}


def test_a_team_and_a_person_outside_it_are_proposed_at_the_tenant_only():
    chains = {"u1": [OPS, ACME], "u3": [OPS, ACME], "u4": [OPS, ACME], "u2": [ACME]}
    assert placed(chains) == {(ACME, frozenset(chains))}


def test_a_team_inside_a_team_is_narrower_than_its_parent():
    oncall = "team:acme/ops.oncall"
    chains = {f"u{n}": [oncall, OPS, ACME] for n in range(3)}
    chains["u9"] = [OPS, ACME]
    assert placed(chains) == {(OPS, frozenset(chains))}


def test_teams_outside_every_tenant_with_no_scope_in_common_are_proposed_apart():
    chains = {"a1": ["team:a"], "a2": ["team:a"], "a3": ["team:a"]}
    chains |= {"b1": ["team:b"], "b2": ["team:b"], "b3": ["team:b"], "b4": ["team:b"]}
    assert placed(chains) == {
        ("team:a", frozenset({"a1", "a2", "a3"})),
        ("team:b", frozenset({"b1", "b2", "b3", "b4"})),
    }


def test_fewer_people_than_the_minimum_are_not_proposed():
    chains = {"u1": [OPS, ACME], "u2": [ACME], "x1": ["tenant:globex"]}
    assert placed(chains) == set()
    assert placed(chains, min_people=2) == {(ACME, frozenset({"u1", "u2"}))}


def test_a_person_in_two_overlapping_groups_is_proposed_once():
    chains = {"p1": ["team:a"], "p2": ["team:a"], "p3": ["team:a", "team:b"]}
    chains |= {"p4": ["team:b"], "p5": ["team:b"], "p6": ["team:b"]}
    result = promotion_scopes(chains, 2)
    people = [person for p in result for person in p.people]
    assert sorted(people) == sorted(chains)  # each once
    assert {p.scope for p in result} == {"team:a", "team:b"}


def test_people_with_no_scope_that_may_receive_it_are_not_proposed():
    assert placed({"u1": [], "u2": [], "u3": []}) == set()
    assert narrowest_cover({"u1": [OPS]}, []) is None


def test_the_replaced_values_tags_come_first_and_none_is_lost():
    assert promoted_tags(["finance", "policy"], ["policy", "agents"]) == [
        "finance",
        "policy",
        "agents",
    ]
    assert promoted_tags([], ["agents"]) == ["agents"]


# --- properties over generated memberships --------------------------------------------


@st.composite
def organisations(draw):
    """(chains, parent of each team and tenant): people with their teams and tenants,
    narrowest first, as a tree gives them: each person in one tenant (or none), in some of
    its teams, each team after the sub-teams below it; a tenant's people always hold the
    tenant."""
    tenants = [f"tenant:t{n}" for n in range(draw(st.integers(1, 3)))] + [None]
    teams = {}  # team -> (tenant, parent team)
    for tenant in tenants:
        prefix = tenant.removeprefix("tenant:") + "/" if tenant else ""
        for n in range(draw(st.integers(0, 3))):
            name = f"team:{prefix}g{n}"
            parents = [t for t, (owner, _) in teams.items() if owner == tenant]
            parent = draw(st.sampled_from([None, *parents])) if parents else None
            teams[name] = (tenant, parent)

    def depth(team):
        parent = teams[team][1]
        return 0 if parent is None else 1 + depth(parent)

    chains = {}
    for n in range(draw(st.integers(0, 12))):
        tenant = draw(st.sampled_from(tenants))
        own = sorted(t for t, (owner, _) in teams.items() if owner == tenant)
        joined = set(draw(st.lists(st.sampled_from(own), unique=True))) if own else set()
        if draw(st.booleans()):  # a member of a sub-team is usually in its parent too
            joined |= {teams[t][1] for t in joined if teams[t][1] is not None}
        chain = sorted(joined, key=lambda t: (-depth(t), t))
        chains[f"p{n}"] = chain + ([tenant] if tenant else [])
    parent_of = {tenant: None for tenant in tenants if tenant}
    parent_of |= {team: parent or tenant for team, (tenant, parent) in teams.items()}
    return chains, parent_of


@st.composite
def any_chains(draw):
    """People with any chains at all (a scope once per chain, in any order)."""
    pool = [f"s{n}" for n in range(draw(st.integers(1, 6)))]
    return {
        f"p{n}": draw(st.lists(st.sampled_from(pool), unique=True))
        for n in range(draw(st.integers(0, 10)))
    }


def _check(chains, min_people):
    result = promotion_scopes(chains, min_people)
    seen = set()
    for p in result:
        assert len(p.people) >= min_people
        assert not (p.people & seen), "a person is in two proposals"
        seen |= p.people
        # The proposed scope covers every person...
        assert all(p.scope in chains[person] for person in p.people)
        # ...and no scope that comes before it in all their chains covers them all.
        common = set.intersection(*(set(chains[person]) for person in p.people))
        for other in common - {p.scope}:
            assert not all(
                chains[person].index(other) < chains[person].index(p.scope) for person in p.people
            ), f"{other} is narrower than {p.scope} for all of {sorted(p.people)}"
    covered = [person for person, chain in chains.items() if chain]
    shared = set.intersection(*(set(chains[person]) for person in covered)) if covered else set()
    if shared and len(covered) >= min_people:
        # People who share a scope are one proposal, not one per scope they share.
        assert [p.people for p in result] == [frozenset(covered)]
    return result


def _above(scope, parent_of):
    while parent_of.get(scope) is not None:
        scope = parent_of[scope]
        yield scope


@settings(max_examples=300, deadline=None)
@given(organisations(), st.integers(1, 4))
def test_every_placement_is_the_narrowest_cover_of_its_people(world, min_people):
    chains, parent_of = world
    for p in _check(chains, min_people):
        # In the tree: no team below the proposed scope holds all its people, and a wider
        # scope is proposed only for people who span several scopes below it.
        common = set.intersection(*(set(chains[person]) for person in p.people))
        assert not any(p.scope in _above(scope, parent_of) for scope in common)


@settings(max_examples=300, deadline=None)
@given(organisations(), st.integers(1, 4), st.randoms(use_true_random=False))
def test_the_placements_do_not_depend_on_the_order_people_come_in(world, min_people, rnd):
    chains, _ = world
    people = list(chains)
    rnd.shuffle(people)
    shuffled = {person: chains[person] for person in people}
    assert placed(shuffled, min_people) == placed(chains, min_people)


@settings(max_examples=300, deadline=None)
@given(any_chains(), st.integers(1, 4))
def test_any_chains_keep_the_rule(chains, min_people):
    _check(chains, min_people)


@pytest.mark.parametrize("size", [3, 5, 30])
def test_a_teams_members_are_never_also_proposed_at_their_tenant(size):
    chains = {f"u{n}": [OPS, ACME] for n in range(size)}
    [placement] = promotion_scopes(chains, 3)
    assert placement.scope == OPS and len(placement.people) == size
