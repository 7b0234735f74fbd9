"""Reach and visibility over MCP, as properties, over the generated worlds of tests/worlds.py.

For random tenants, nested teams, memberships, an actor outside every tenant, and memories
at every kind of scope (superseded, pinned, invalidated, expired): no MCP tool reveals a
memory outside the connection's actor's chain, whether the actor is named by the URL or
bound to the key; every get or invalidate of an id outside the chain is "memory not found"
and leaves the memory in place; and a key of one tenant, pointed at another tenant's actor
(or a bound key pointed at anyone but its actor), gets "not found" from every tool, with
nothing read, registered or written. The oracle is the chain computed from the generated
world, not from the code under test.
"""

import json

import pytest
from hypothesis import HealthCheck, given, settings

from memory_core.accounts import keys
from memory_core.models import Actor, Memory
from tests import mcp_wire as wire
from tests.worlds import World, worlds

# slow: a generated world per example, every tool asked through the wire.
pytestmark = pytest.mark.slow

EVERY_TOOL = [
    ("memory_context", {}),
    ("remember", {"key": "probe", "fact": "written where it must not be"}),
    ("search_memories", {"query": "note"}),
    ("get_memory", {"memory_id": "mem_00000000000000000000000000"}),
    ("invalidate_memory", {"memory_id": "mem_00000000000000000000000000", "reason": "probe"}),
    ("record_message", {"thread_id": "probe", "role": "user", "text": "hello"}),
]


def chains(spec, world):
    """Each actor's chain, from the spec: its own scope, its teams in the order given, its
    tenant, global (and for the actor outside every tenant, its one team)."""
    result = {}
    for t, tenant_spec in enumerate(spec["tenants"]):
        for p, (_, team_indexes) in enumerate(tenant_spec["people"]):
            actor = world.people[t][p]
            result[actor.pk] = [
                f"actor:{actor.ref}",
                *(world.teams[t][j].token for j in team_indexes),
                world.tenants[t].token,
                "global",
            ]
    if world.loner is not None:
        result[world.loner.pk] = [f"actor:{world.loner.ref}", world.free.token, "global"]
    return result


def revealed_ids(body: dict) -> set[str]:
    """Every memory id a structured result shows: entries, items, lines and overrides."""
    ids = set()
    for item in body.get("entries", []) + body.get("items", []):
        ids.add(item["id"])
        ids.update(o["id"] for o in item["overrides"])
    ids.update(line["memory_id"] for line in body.get("lines", []))
    if "id" in body:
        ids.add(body["id"])
    return ids


def reveals_nothing(result: dict, hidden_texts):
    wire_text = json.dumps(result)
    for text in hidden_texts:
        assert text not in wire_text


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(spec=worlds())
def test_no_mcp_tool_reveals_a_memory_outside_the_connections_actor(client, db, operator, spec):
    world = World(spec, operator)
    # Examples accumulate in the test's transaction, so earlier worlds' memories at `global`
    # lie in every chain too: visibility is checked against every row, probing against this
    # world's.
    every = {m.uid: m.scope.token for m in Memory.objects.select_related("scope")}
    rows = {
        m.uid: m for m in Memory.objects.select_related("scope").filter(text__contains=world.tag)
    }
    chain_of = chains(spec, world)
    tenant_secrets = [
        keys.create_api_key(f"mcp {t}", tenant, principal=operator)[1]
        for t, tenant in enumerate(world.tenants)
    ]
    global_secret = keys.create_api_key("mcp global", world.scopes[0], principal=operator)[1]
    tenant_of = {a.pk: t for t, people in enumerate(world.people) for a in people}

    for actor in world.actors:
        chain = chain_of[actor.pk]
        in_chain = {uid for uid, token in every.items() if token in chain}
        hidden = {uid: m.text for uid, m in rows.items() if uid not in in_chain}
        t = tenant_of.get(actor.pk)
        key_secret = tenant_secrets[t] if t is not None else global_secret
        named = actor.ref.split("/", 1)[-1] if t is not None else actor.ref
        reach = world.tenants[t] if t is not None else world.scopes[0]
        bound_secret = keys.create_api_key("bound", reach, principal=operator, actor_ref=named)[1]
        # The actor named by the URL (relative to the key's tenant), and bound to a key.
        for secret, path in [(key_secret, f"/mcp/actors/{named}/"), (bound_secret, "/mcp/")]:
            for arguments in ({}, {"query": "note"}):
                result = wire.call(client, path, secret, "memory_context", arguments)
                body = wire.structured(result)
                assert body["scopes"] == chain
                assert revealed_ids(body) <= in_chain
                reveals_nothing(result, hidden.values())
            result = wire.call(
                client, path, secret, "search_memories", {"query": "note", "limit": 100}
            )
            assert revealed_ids(wire.structured(result)) <= in_chain
            reveals_nothing(result, hidden.values())
            for uid in rows:
                result = wire.call(client, path, secret, "get_memory", {"memory_id": uid})
                if uid in hidden:
                    assert wire.refused(result) == "memory not found"
                else:
                    assert (
                        result["isError"] or revealed_ids(result["structuredContent"]) <= in_chain
                    )
                reveals_nothing(result, hidden.values())
            for uid in hidden:
                arguments = {"memory_id": uid, "reason": "probe"}
                result = wire.call(client, path, secret, "invalidate_memory", arguments)
                assert wire.refused(result) == "memory not found"

        # Every other tenant's key, pointed at this actor by its qualified name, and a key
        # bound to this actor, pointed at anyone else: the actor does not exist for them.
        people_before = Actor.objects.count()
        probes = [
            (secret, f"/mcp/actors/{actor.ref}/")
            for other, secret in enumerate(tenant_secrets)
            if other != t and t is not None
        ]
        probes += [
            (bound_secret, f"/mcp/actors/{other.ref}/")
            for other in world.actors
            if other.pk != actor.pk
        ]
        for secret, path in probes:
            for tool, arguments in EVERY_TOOL:
                result = wire.call(client, path, secret, tool, arguments)
                assert wire.refused(result).endswith("not found"), (tool, path)
                reveals_nothing(result, [m.text for m in rows.values()])
        assert Actor.objects.count() == people_before

    # Nothing above changed a memory: every version is where the world put it.
    after = {
        m.uid: (m.scope_id, m.retired_at) for m in Memory.objects.filter(text__contains=world.tag)
    }
    assert after == {uid: (m.scope_id, m.retired_at) for uid, m in rows.items()}
    assert not Memory.objects.filter(key="probe").exists()
