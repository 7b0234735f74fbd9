"""Actors, chains, reach and the scope tree."""

import pytest

from memory_core import actors
from memory_core.errors import Forbidden, Invalid, NotFound
from memory_core.models import Actor, LedgerEvent, Scope


def test_chain_is_actor_then_memberships_in_order_then_global(org):
    assert actors.chain_of(org.u1) == ("actor:acme/u1", "team:acme/ops", "tenant:acme", "global")
    assert actors.chain_of(org.x9) == ("actor:globex/x9", "tenant:globex", "global")


def test_unknown_scopes_are_created_each_under_the_next_one(org):
    actor = actors.put_actor(
        "u7", None, ["squad:night", "team:support"], org.acme_key, org.acme_agent
    )
    # Named relative to the key's tenant: stored inside it.
    night = Scope.objects.get(token="squad:acme/night")
    support = Scope.objects.get(token="team:acme/support")
    assert night.parent == support and support.parent == org.acme
    assert night.stream == "tenant:acme"
    # The key's reach is added when missing.
    assert actors.chain_of(actor) == (
        "actor:acme/u7",
        "squad:acme/night",
        "team:acme/support",
        "tenant:acme",
        "global",
    )
    assert actor.scope.parent == night


def test_a_scope_outside_the_keys_reach_is_403(org):
    with pytest.raises(Forbidden):
        actors.put_actor("u8", None, ["tenant:globex"], org.acme_key, org.acme_agent)
    assert not Actor.objects.filter(ref="acme/u8").exists()


def test_an_actor_outside_the_keys_reach_is_404_as_if_unknown(org):
    # `u1` means globex/u1 to globex's key; acme's u1 by its qualified name is a 404.
    with pytest.raises(NotFound):
        actors.actor_for_key("u1", org.globex_key, org.globex_agent)
    with pytest.raises(NotFound):
        actors.actor_for_key("acme/u1", org.globex_key, org.globex_agent, register=True)
    with pytest.raises(NotFound):
        actors.put_actor("acme/u1", "hijack", [], org.globex_key, org.globex_agent)
    org.u1.refresh_from_db()
    assert org.u1.display_name == "User One"


def test_first_sight_registers_an_actor_under_the_keys_reach(org):
    actor = actors.actor_for_key("new-1", org.acme_key, org.acme_agent, register=True)
    assert actor.ref == "acme/new-1"
    assert actors.chain_of(actor) == ("actor:acme/new-1", "tenant:acme", "global")
    assert LedgerEvent.objects.filter(kind="actor.registered", actor_ref="acme/new-1").exists()


@pytest.mark.parametrize("ref", ["", "has space", "-leading", "x" * 129])
def test_malformed_actor_refs_are_422(org, ref):
    with pytest.raises(Invalid):
        actors.actor_for_key(ref, org.acme_key, org.acme_agent, register=True)


@pytest.mark.parametrize(
    "scopes", [["global"], ["actor:acme/u2"], ["Not A Scope"], ["team:a", "team:a"]]
)
def test_membership_lists_are_validated(org, scopes):
    with pytest.raises(Invalid):
        actors.put_actor("u9", None, scopes, org.acme_key, org.acme_agent)
