"""A PUT /actors changes only what lies inside the key's reach (docs/agents/api.md, "Actors").

The examples are the reported escalations, each exactly as it was sent; the property holds
the rule over generated organisations, keys of every reach (global, tenant, team, an actor's
own scope) and keys bound to one actor, with generated PUT bodies: through a PUT made with a
key, the memories that key can read never grow beyond its reach, no membership outside its
reach changes, and no actor named in a tenant loses `tenant:T`. The oracle reads the rows,
not the helpers under test.
"""

import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_core import actors, writes
from memory_core.accounts import keys
from memory_core.accounts.principals import Principal
from memory_core.models import Actor, Membership, Memory, Scope
from tests.helpers import bearer


def put(client, secret, ref, scopes, display_name=None):
    body = {"scopes": scopes}
    if display_name is not None:
        body["display_name"] = display_name
    return client.put(
        f"/api/v1/actors/{ref}", body, content_type="application/json", headers=bearer(secret)
    )


def chain(ref):
    return list(actors.chain_of(Actor.objects.get(ref=ref)))


def test_a_bound_key_may_not_join_its_person_to_teams(client, org, operator):
    sales, _ = actors.ensure_scope("team:acme/sales", org.acme, principal=operator)
    writes.publish(org.ops, "pager", "page the on-call lead", principal=operator)
    _, secret = keys.create_api_key("session", org.acme, principal=operator, actor_ref="u2")
    before = chain("acme/u2")

    answer = put(client, secret, "u2", ["team:ops", "team:sales", "team:finance", "tenant:acme"])

    assert answer.status_code == 403
    assert "bound" in answer.json()["detail"]
    assert chain("acme/u2") == before
    assert not Scope.objects.filter(token="team:acme/finance").exists()
    turn = client.post(
        "/api/v1/turns",
        {"actor": "u2", "run_id": "after-put"},
        content_type="application/json",
        headers=bearer(secret),
    )
    assert "page the on-call lead" not in turn.json()["block"]
    assert sales.memberships.count() == 0


def test_a_bound_key_creates_no_scope(client, org, operator):
    _, secret = keys.create_api_key("session", org.acme, principal=operator, actor_ref="u1")

    answer = put(client, secret, "u1", ["team:boundnew", "team:ops", "tenant:acme"])

    assert answer.status_code == 403
    assert not Scope.objects.filter(token="team:acme/boundnew").exists()


def test_a_bound_key_may_still_set_its_display_name(client, org, operator):
    _, secret = keys.create_api_key("session", org.acme, principal=operator, actor_ref="u1")
    before = chain("acme/u1")

    answer = put(client, secret, "u1", ["team:ops", "tenant:acme"], display_name="Uma")

    assert answer.status_code == 200
    assert answer.json()["scopes"] == before
    assert Actor.objects.get(ref="acme/u1").display_name == "Uma"


def test_a_team_key_keeps_the_tenant_and_other_teams(client, org, operator):
    finance, _ = actors.ensure_scope("team:acme/finance", org.acme, principal=operator)
    sales, _ = actors.ensure_scope("team:acme/sales", org.acme, principal=operator)
    actors.put_actor("u2", "", ["team:finance", "tenant:acme"], org.acme_key, org.acme_agent)
    actors.put_actor(
        "u6", "", ["team:sales", "team:finance", "tenant:acme"], org.acme_key, org.acme_agent
    )
    _, team_secret = keys.create_api_key("finance host", finance, principal=operator)

    u2 = put(client, team_secret, "u2", ["team:finance"])
    u6 = put(client, team_secret, "u6", ["team:finance"])

    assert u2.status_code == 200
    assert u2.json()["scopes"] == ["actor:acme/u2", "team:acme/finance", "tenant:acme", "global"]
    assert u6.json()["scopes"] == [
        "actor:acme/u6",
        "team:acme/sales",
        "team:acme/finance",
        "tenant:acme",
        "global",
    ]
    # The tenant's own key still reaches both.
    for ref in ("u2", "u6"):
        assert (
            client.get(f"/api/v1/actors/{ref}", headers=bearer(org.acme_secret)).status_code == 200
        )


def test_a_team_key_naming_a_scope_outside_its_reach_is_403_and_changes_nothing(
    client, org, operator
):
    finance, _ = actors.ensure_scope("team:acme/finance", org.acme, principal=operator)
    actors.put_actor("u2", "", ["team:finance", "tenant:acme"], org.acme_key, org.acme_agent)
    _, team_secret = keys.create_api_key("finance host", finance, principal=operator)
    before = chain("acme/u2")

    answer = put(client, team_secret, "u2", ["team:ops"])

    assert answer.status_code == 403
    assert chain("acme/u2") == before


def test_no_put_removes_an_actors_tenant(client, org):
    answer = put(client, org.global_secret, "acme/u1", ["team:acme/ops"])

    assert answer.status_code == 200
    assert answer.json()["scopes"] == ["actor:acme/u1", "team:acme/ops", "tenant:acme", "global"]


def test_a_tenant_key_still_replaces_memberships_inside_its_tenant(client, org):
    answer = put(client, org.acme_secret, "u1", ["tenant:acme"])

    assert answer.status_code == 200
    assert answer.json()["scopes"] == ["actor:acme/u1", "tenant:acme", "global"]


# The property -------------------------------------------------------------------------------

TEAM_NAMES = ["t0", "t1", "t2"]
REFS = ["u1", "u2", "u3"]


@st.composite
def worlds(draw):
    # Team j hangs under the tenant (-1) or under an earlier team.
    parents = [draw(st.integers(-1, j - 1)) for j in range(draw(st.integers(1, 3)))]
    people = []
    for ref in draw(st.lists(st.sampled_from(REFS), unique=True, min_size=1, max_size=3)):
        teams = draw(st.permutations(range(len(parents))))
        people.append((ref, list(teams[: draw(st.integers(0, len(teams)))])))
    holders = ["global", "tenant", *[("team", j) for j in range(len(parents))]]
    holders += [("actor", p) for p in range(len(people))]
    notes = draw(st.lists(st.sampled_from(holders), min_size=1, max_size=8))
    # The key that PUTs: its reach, and whether it is bound to one of the people.
    reach = draw(
        st.sampled_from(
            ["global", "tenant", *[("team", j) for j in range(len(parents))]]
            + [("actor", p) for p in range(len(people))]
        )
    )
    bound = draw(st.one_of(st.none(), st.integers(0, len(people) - 1)))
    bodies = draw(
        st.lists(
            st.tuples(
                st.one_of(st.integers(0, len(people) - 1), st.just("new")),
                st.lists(
                    st.sampled_from(
                        ["tenant", "other-tenant", "new-team", *[("team", j) for j in range(3)]]
                    ),
                    unique=True,
                    max_size=4,
                ),
            ),
            min_size=1,
            max_size=3,
        )
    )
    return {
        "teams": parents,
        "people": people,
        "notes": notes,
        "reach": reach,
        "bound": bound,
        "bodies": bodies,
    }


class World:
    def __init__(self, spec, operator):
        self.tag = tag = uuid.uuid4().hex[:8]
        root = actors.global_scope()
        self.tenant_name = f"r{tag}"
        self.tenant, _ = actors.ensure_scope(f"tenant:{self.tenant_name}", root, principal=operator)
        self.other, _ = actors.ensure_scope(f"tenant:o{tag}", root, principal=operator)
        actors.ensure_scope(f"team:o{tag}/t0", self.other, principal=operator)
        self.teams = []
        for j, parent in enumerate(spec["teams"]):
            under = self.tenant if parent < 0 else self.teams[parent]
            token = f"team:{self.tenant_name}/t{j}"
            self.teams.append(actors.ensure_scope(token, under, principal=operator)[0])
        host, _ = keys.create_api_key("host", self.tenant, principal=operator)
        agent = Principal.for_api_key(host)
        self.people = [
            actors.put_actor(ref, "", [f"team:t{j}" for j in teams], host, agent)
            for ref, teams in spec["people"]
        ]
        for n, holder in enumerate(spec["notes"]):
            scope = self._scope(holder)
            writes.publish(scope, f"k{n}", f"note {tag} {n}", principal=operator)

    def _scope(self, holder):
        if holder == "global":
            return actors.global_scope()
        if holder == "tenant":
            return self.tenant
        kind, index = holder
        return self.teams[index] if kind == "team" else self.people[index].scope


def _subtree(scope):
    """Every scope at or below `scope` in the tree (the oracle's own walk)."""
    found, frontier = {scope.id}, [scope.id]
    while frontier:
        frontier = list(
            Scope.objects.filter(parent_id__in=frontier)
            .exclude(id__in=found)
            .values_list("id", flat=True)
        )
        found.update(frontier)
    return found


def _ancestors(scope):
    ids = []
    while scope is not None:
        ids.append(scope.id)
        scope = scope.parent
    return set(ids)


def _memberships():
    """ref -> its memberships' scope ids, in order."""
    rows = Membership.objects.order_by("actor__ref", "rank").values_list("actor__ref", "scope_id")
    found: dict[str, list[int]] = {}
    for ref, scope_id in rows:
        found.setdefault(ref, []).append(scope_id)
    return found


def _readable(reach, bound_ref):
    """Live memories a key with this reach (bound to `bound_ref`, if any) can read: those
    in the chain of every actor whose chain holds the reach."""
    memberships = _memberships()
    own = dict(Actor.objects.values_list("ref", "scope_id"))
    global_id = actors.global_scope().id
    scopes = set()
    for ref, scope_id in own.items():
        chain = [scope_id, *memberships.get(ref, []), global_id]
        if reach.id in chain and (bound_ref is None or ref == bound_ref):
            scopes.update(chain)
    return set(
        Memory.objects.filter(scope_id__in=scopes, retired_at__isnull=True).values_list(
            "uid", flat=True
        )
    )


def _body_token(world, item):
    if item == "tenant":
        return "tenant:" + world.tenant_name
    if item == "other-tenant":
        return f"team:o{world.tag}/t0"
    if item == "new-team":
        return f"team:{world.tenant_name}/fresh"
    return f"team:{world.tenant_name}/t{item[1]}"


@pytest.mark.slow  # a generated world per example
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(spec=worlds())
def test_no_put_widens_what_its_key_reads_or_touches_memberships_outside_its_reach(
    db, client, operator, spec
):
    world = World(spec, operator)
    reach = world._scope(spec["reach"]) if spec["reach"] != "global" else actors.global_scope()
    bound = world.people[spec["bound"]] if spec["bound"] is not None else None
    if bound is not None and not actors.key_reaches(bound, reach):
        bound = None  # a key bound to an actor outside its reach cannot be made
    _, secret = keys.create_api_key(
        "probe", reach, principal=operator, actor_ref=bound.ref if bound else None
    )
    for target, items in spec["bodies"]:
        ref = world.people[target].ref if target != "new" else f"{world.tenant_name}/fresh"
        before_read = _readable(reach, bound.ref if bound else None)
        before = _memberships()
        tenant_id = world.tenant.id

        answer = put(client, secret, ref, [_body_token(world, item) for item in items])

        assert answer.status_code < 500
        after = _memberships()
        # (A PUT may have created a scope below the reach: inside it, as the rule says.)
        inside = _subtree(reach)
        allowed = set(
            Memory.objects.filter(
                scope_id__in=inside | _ancestors(reach), retired_at__isnull=True
            ).values_list("uid", flat=True)
        )
        # What the key reads grows only by what lies inside (or above) its reach.
        assert _readable(reach, bound.ref if bound else None) <= before_read | allowed
        for person, scopes in after.items():
            was = before.get(person)
            outside_now = [s for s in scopes if s not in inside]
            if was is not None:
                assert outside_now == [s for s in was if s not in inside], (person, answer.json())
            if person.startswith(world.tenant_name + "/"):
                assert tenant_id in scopes
        if bound is not None or reach.token.startswith("actor:"):
            assert after == before
        if answer.status_code != 200:
            assert after == before
