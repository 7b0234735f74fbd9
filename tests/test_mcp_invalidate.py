"""The model invalidates; it never erases (docs/agents/mcp.md).

`invalidate_memory` takes a note at the actor's own scope out of the prompt and keeps it in
its history, where a person can reinstate it; `forget_memory` is not offered and not
callable, so a prompt injection ("forget everything about me") can erase nothing. Erasing
stays the host's act (DELETE /memories/{id}). Each refusal is checked with what it leaves
in the database, and the trail holds ids, counts and the reason's length only.
"""

import json

import pytest

from memory_core import writes
from memory_core.models import AccessLog, Actor, Digest, LedgerEvent, Memory, Message, Thread
from tests import mcp_wire as wire
from tests.mcp_wire import HANDSHAKE, MODERN, envelope, post

U1 = "/mcp/actors/u1/"
REASON = "they moved to Lisbon in May"


def call(client, secret, tool, arguments, *, path=U1):
    return wire.call(client, path, secret, tool, arguments)


def ok(client, secret, tool, arguments, **kwargs):
    return wire.structured(call(client, secret, tool, arguments, **kwargs))


def refused(client, secret, tool, arguments, **kwargs):
    return wire.refused(call(client, secret, tool, arguments, **kwargs))


def invalidate(client, secret, memory_id, reason=REASON, **kwargs):
    arguments = {"memory_id": memory_id, "reason": reason}
    return call(client, secret, "invalidate_memory", arguments, **kwargs)


def stored():
    return {
        model.__name__: model.objects.count()
        for model in (Memory, Digest, Message, Thread, Actor, LedgerEvent)
    }


def live(uid: str) -> bool:
    return Memory.objects.live().filter(uid=uid).exists()


@pytest.fixture
def note(client, org):
    """u1's own note, remembered by its agent over MCP."""
    return ok(client, org.acme_secret, "remember", {"key": "city", "fact": "lives in Porto"})


@pytest.fixture
def others(org, operator):
    """A tenant policy u1 sees, u2's own note, x9's note in another tenant."""
    policy = writes.publish(org.acme, "units", "report in kilometres", principal=operator)
    u2_note = writes.remember(org.u2, "units", "u2 prefers miles", principal=org.acme_agent)
    x9_note = writes.remember(org.x9, "units", "x9 prefers leagues", principal=org.globex_agent)
    return policy, u2_note.memory, x9_note.memory


# --- the catalogue ---------------------------------------------------------------------------


@pytest.mark.parametrize("revision", [MODERN, HANDSHAKE])
def test_the_model_is_offered_invalidate_and_no_way_to_erase(client, org, revision):
    message = envelope("tools/list", revision=revision)
    tools = post(client, "/mcp/", message, org.acme_secret, revision=revision).json()["result"]
    by_name = {tool["name"]: tool for tool in tools["tools"]}
    assert "forget_memory" not in by_name
    assert not [name for name in by_name if "forget" in name or "delete" in name]
    tool = by_name["invalidate_memory"]
    assert tool["inputSchema"]["required"] == ["memory_id", "reason"]
    assert set(tool["inputSchema"]["properties"]) == {"memory_id", "reason"}
    assert tool["inputSchema"]["additionalProperties"] is False
    assert "reinstate" in tool["description"]
    assert tool["annotations"]["readOnlyHint"] is False


@pytest.mark.parametrize("revision, status", [(MODERN, 400), (HANDSHAKE, 200)])
def test_forget_memory_is_an_unknown_tool_and_erases_nothing(client, org, note, revision, status):
    before = {**stored(), "AccessLog": AccessLog.objects.count()}
    message = envelope(
        "tools/call",
        {"name": "forget_memory", "arguments": {"memory_id": note["id"]}},
        revision=revision,
    )
    response = post(client, U1, message, org.acme_secret, revision=revision)
    assert response.status_code == status
    error = response.json()["error"]
    assert (error["code"], error["message"]) == (-32602, "Unknown tool: 'forget_memory'")
    assert {**stored(), "AccessLog": AccessLog.objects.count()} == before
    assert live(note["id"])


# --- success: out of the prompt, kept in the history, reinstatable --------------------------


def test_invalidate_takes_the_note_out_of_the_next_prompt_and_keeps_its_history(client, org, note):
    shown = ok(client, org.acme_secret, "memory_context", {"run_id": "r1"})
    assert note["id"] in {line["memory_id"] for line in shown["lines"]}

    result = invalidate(client, org.acme_secret, note["id"])
    body = wire.structured(result)
    assert body["memory_id"] == note["id"] and body["scope"] == "actor:acme/u1"
    assert result["content"][0]["text"] == (
        f"Invalidated {note['id']} at actor:acme/u1: it is no longer in the memory block "
        "from the next turn on. It stays in its history, where a person can reinstate it."
    )

    # The next turn does not show it; nor does search or get_memory.
    after = ok(client, org.acme_secret, "memory_context", {"run_id": "r2"})
    assert note["id"] not in {line["memory_id"] for line in after["lines"]}
    assert "Porto" not in after["block"]
    found = ok(client, org.acme_secret, "search_memories", {"query": "Porto"})
    assert found["items"] == []
    assert refused(client, org.acme_secret, "get_memory", {"memory_id": note["id"]}) == (
        "memory not found"
    )

    # Kept: the row, the reason on it, who retired it, and the run that showed it.
    memory = Memory.objects.get(uid=note["id"])
    assert (memory.text, memory.retired_reason) == ("lives in Porto", "invalidated")
    assert memory.retired_by == f"key:{org.acme_key.prefix}"
    assert memory.retired_note == REASON
    assert "lives in Porto" in Digest.objects.get(run_id="r1").block


def test_the_trail_names_the_key_and_the_reasons_length_never_its_text(client, org, note):
    invalidate(client, org.acme_secret, note["id"])
    event = LedgerEvent.objects.get(kind="memory.invalidated")
    assert event.principal == f"key:{org.acme_key.prefix}"
    assert (event.scope, event.actor_ref) == ("actor:acme/u1", "acme/u1")
    assert event.payload == {"memory": note["id"], "reason_chars": len(REASON)}
    row = AccessLog.objects.get(action="invalidate")
    assert (row.channel, row.outcome, row.principal) == ("mcp", 200, event.principal)
    assert (row.actor_ref, row.scope) == ("acme/u1", "actor:acme/u1")
    assert (row.memory_ids, row.count) == ([note["id"]], 1)
    trail = json.dumps(
        [
            [e.payload for e in LedgerEvent.objects.all()],
            [[r.actor_ref, r.scope, r.memory_ids, r.detail] for r in AccessLog.objects.all()],
        ]
    )
    for text in ("Lisbon", "Porto", "city"):
        assert text not in trail


def test_a_person_reinstates_what_the_model_invalidated(client, org, users, note):
    invalidate(client, org.acme_secret, note["id"])
    client.force_login(users.owner)
    page = client.get(f"/memories/{note['id']}/").content.decode()
    assert f'action="/memories/{note["id"]}/reinstate/"' in page
    assert REASON in page and f"key:{org.acme_key.prefix}" in page
    response = client.post(f"/memories/{note['id']}/reinstate/")
    assert response.status_code == 302
    back = Memory.objects.live().get(key="city")
    # Reinstating undoes the invalidation: the agent's conclusion stays the agent's (the
    # ledger names the person who reinstated it).
    assert (back.text, back.author, back.supersedes.uid) == ("lives in Porto", "agent", note["id"])
    shown = ok(client, org.acme_secret, "memory_context", {"run_id": "r3"})
    assert back.uid in {line["memory_id"] for line in shown["lines"]}


# --- refusals -------------------------------------------------------------------------------


def test_a_note_held_wider_is_the_apis_403_and_stays(client, org, others):
    policy, _, _ = others
    before = stored()
    text = wire.refused(invalidate(client, org.acme_secret, policy.uid))
    assert text == (
        "this memory is held at a wider scope; an administrator invalidates it in the console"
    )
    assert stored() == before and live(policy.uid)
    row = AccessLog.objects.get(action="invalidate")
    assert (row.channel, row.outcome, row.actor_ref) == ("mcp", 403, "acme/u1")
    assert row.detail == {"reason": "agent_above_own_scope"}


@pytest.mark.parametrize("which", ["u2", "x9", "unknown", "malformed"])
def test_a_note_the_actor_cannot_see_is_not_found(client, org, others, which):
    _, u2_note, x9_note = others
    memory_id = {
        "u2": u2_note.uid,
        "x9": x9_note.uid,
        "unknown": "mem_00000000000000000000000000",
        "malformed": "../../etc",
    }[which]
    before = stored()
    assert wire.refused(invalidate(client, org.acme_secret, memory_id)) == "memory not found"
    assert stored() == before
    assert live(u2_note.uid) and live(x9_note.uid)
    row = AccessLog.objects.get(action="invalidate")
    assert (row.channel, row.outcome, row.actor_ref) == ("mcp", 404, "acme/u1")
    assert row.memory_ids == ([] if which == "malformed" else [memory_id])


def test_another_tenants_key_cannot_reach_the_note(client, org, note):
    before = stored()
    text = wire.refused(invalidate(client, org.globex_secret, note["id"], path="/mcp/actors/x9/"))
    assert text == "memory not found"
    assert refused(
        client,
        org.globex_secret,
        "invalidate_memory",
        {"memory_id": note["id"], "reason": REASON},
        path="/mcp/actors/acme/u1/",
    ) == ("actor 'acme/u1' not found")
    assert stored() == before and live(note["id"])


def test_an_invalidated_or_replaced_version_is_not_found(client, org, note):
    invalidate(client, org.acme_secret, note["id"])
    assert wire.refused(invalidate(client, org.acme_secret, note["id"])) == "memory not found"
    first = ok(client, org.acme_secret, "remember", {"key": "tone", "fact": "formal"})
    ok(client, org.acme_secret, "remember", {"key": "tone", "fact": "casual"})
    assert wire.refused(invalidate(client, org.acme_secret, first["id"])) == "memory not found"
    assert LedgerEvent.objects.filter(kind="memory.invalidated").count() == 1
    rows = AccessLog.objects.filter(action="invalidate").order_by("id")
    assert [r.outcome for r in rows] == [200, 404, 404]


@pytest.mark.parametrize(
    "reason, message",
    [
        ("", "say why the memory is invalid"),
        ("   ", "say why the memory is invalid"),
        ("two\nlines", "the reason is one line of at most 500 characters"),
        ("x" * 501, "the reason is one line of at most 500 characters"),
    ],
)
def test_a_reason_is_one_line_and_required(client, org, note, reason, message):
    before = stored()
    assert wire.refused(invalidate(client, org.acme_secret, note["id"], reason)) == message
    assert stored() == before and live(note["id"])
    row = AccessLog.objects.get(action="invalidate")
    assert (row.outcome, row.detail) == (422, {"reason": "invalid"})
