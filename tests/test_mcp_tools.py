"""The six MCP tools: the REST API's services, rules, ledger events and access-log rows.

An MCP call is indistinguishable from its REST twin in the audit trail except for its
channel (`mcp`). Whose memories a call reads is fixed by the connection (the URL's actor,
or the key's bound actor) and never by an argument: an actor outside the key's reach is
"not found" and logged as an `actor.lookup` refusal, and no tool takes an actor at all.
Every refusal path is checked with what it leaves in the database.
"""

import re

import pytest

from memory_console.mcp.connection import NO_ACTOR
from memory_core import writes
from memory_core.accounts import keys
from memory_core.models import AccessLog, Actor, Digest, LedgerEvent, Memory, Message, Thread
from tests import mcp_wire as wire
from tests.helpers import bearer
from tests.mcp_wire import HANDSHAKE, MODERN

U1 = "/mcp/actors/u1/"


def call(client, secret, tool, arguments=None, *, path=U1, revision=MODERN):
    return wire.call(client, path, secret, tool, arguments or {}, revision=revision)


def ok(client, secret, tool, arguments=None, **kwargs):
    return wire.structured(call(client, secret, tool, arguments, **kwargs))


def refused(client, secret, tool, arguments=None, **kwargs):
    return wire.refused(call(client, secret, tool, arguments, **kwargs))


def stored():
    return {
        model.__name__: model.objects.count()
        for model in (Memory, Digest, Message, Thread, Actor, LedgerEvent)
    }


@pytest.fixture
def logged(org):
    """The access-log rows written after the fixtures (by the test itself)."""
    mark = AccessLog.objects.order_by("-id").values_list("id", flat=True).first() or 0
    return lambda: AccessLog.objects.filter(id__gt=mark).order_by("id")


@pytest.fixture
def others(org, operator):
    """A tenant policy u1 sees, u2's own note, x9's note in another tenant."""
    policy = writes.publish(org.acme, "units", "report in kilometres", principal=operator)
    u2_note = writes.remember(org.u2, "units", "u2 prefers miles", principal=org.acme_agent)
    x9_note = writes.remember(org.x9, "units", "x9 prefers leagues", principal=org.globex_agent)
    return policy, u2_note.memory, x9_note.memory


# --- memory_context ----------------------------------------------------------------------------


@pytest.mark.parametrize("revision", [MODERN, HANDSHAKE])
def test_memory_context_is_the_turn_with_its_block_and_ids(client, org, others, revision):
    policy, _, _ = others
    result = call(client, org.acme_secret, "memory_context", {"run_id": "r1"}, revision=revision)
    body = wire.structured(result)
    rest = client.post(
        "/api/v1/turns",
        {"actor": "u1", "run_id": "r1"},
        content_type="application/json",
        headers=bearer(org.acme_secret),
    ).json()
    assert body == rest  # the REST replay of the run MCP stored: the same digest
    assert body["actor"] == "u1" and body["scopes"][0] == "actor:acme/u1"
    assert [line["memory_id"] for line in body["lines"]] == [policy.uid]
    [text] = result["content"]
    assert text["type"] == "text"
    assert text["text"].startswith(body["block"])
    assert f"run_id: r1\nmemory ids: units {policy.uid}" in text["text"]
    row = AccessLog.objects.get(action="turn", channel="mcp")
    assert row.actor_ref == "acme/u1" and row.principal == f"key:{org.acme_key.prefix}"
    assert row.memory_ids == [policy.uid] and row.detail["replayed"] is False


def test_without_a_run_id_each_call_is_a_fresh_run_whose_id_is_returned(client, org):
    first = ok(client, org.acme_secret, "memory_context")
    second = ok(client, org.acme_secret, "memory_context")
    assert re.fullmatch(r"run_[0-9A-Z]{26}", first["run_id"])
    assert first["run_id"] != second["run_id"]
    assert Digest.objects.filter(run_id__in=[first["run_id"], second["run_id"]]).count() == 2


def test_the_same_run_id_replays_the_stored_digest(client, org, operator):
    first = ok(client, org.acme_secret, "memory_context", {"run_id": "r1", "query": "units"})
    writes.publish(org.acme, "units", "report in miles", principal=operator)
    again = ok(client, org.acme_secret, "memory_context", {"run_id": "r1"})
    assert again == first


def test_an_empty_context_says_so(client, org):
    result = call(client, org.acme_secret, "memory_context", {"run_id": "r1"})
    assert result["content"][0]["text"] == "Nothing is on file about this person yet.\n\nrun_id: r1"
    assert wire.structured(result)["block"] == ""


def test_memory_context_registers_an_actor_seen_for_the_first_time(client, org):
    body = ok(client, org.acme_secret, "memory_context", path="/mcp/actors/u9/")
    assert body["scopes"] == ["actor:acme/u9", "tenant:acme", "global"]
    row = AccessLog.objects.get(action="actor.register")
    assert row.channel == "mcp" and row.actor_ref == "acme/u9" and row.outcome == 201


# --- remember ------------------------------------------------------------------------------------


def test_remember_writes_at_the_actors_own_scope_and_supersedes_the_same_key(client, org):
    first = ok(client, org.acme_secret, "remember", {"key": "tone", "fact": "formal"})
    result = call(client, org.acme_secret, "remember", {"key": "tone", "fact": "casual"})
    second = wire.structured(result)
    assert (first["scope"], first["author"]) == ("actor:acme/u1", "agent")
    assert second["supersedes"] == first["id"]
    assert result["content"][0]["text"] == (
        f"Remembered tone at actor:acme/u1 ({second['id']}). It replaces {first['id']}."
    )
    assert Memory.objects.get(uid=first["id"]).retired_reason == "superseded"
    events = LedgerEvent.objects.filter(kind="memory.remembered").order_by("id")
    assert [e.payload["memory"] for e in events] == [first["id"], second["id"]]
    rows = AccessLog.objects.filter(action="remember").order_by("id")
    assert [(r.channel, r.outcome) for r in rows] == [("mcp", 201), ("mcp", 201)]


def test_remember_says_which_wider_values_it_overrides(client, org, others):
    result = call(client, org.acme_secret, "remember", {"key": "units", "fact": "miles"})
    assert result["content"][0]["text"].endswith(
        "It takes precedence over the value at tenant:acme."
    )
    assert [o["scope"] for o in wire.structured(result)["overrides"]] == ["tenant:acme"]


def test_remember_tells_the_model_which_key_already_holds_the_fact(client, org):
    first = ok(client, org.acme_secret, "remember", {"key": "coffee", "fact": "drinks flat whites"})
    result = call(
        client, org.acme_secret, "remember", {"key": "drink", "fact": "drinks a flat white"}
    )
    second = wire.structured(result)
    assert second["similar"] == [{"id": first["id"], "key": "coffee", "scope": "actor:acme/u1"}]
    assert result["content"][0]["text"] == (
        f"Remembered drink at actor:acme/u1 ({second['id']}). Nearly the same fact is already "
        f"remembered under coffee ({first['id']}): keep one key for it (remember the fact "
        f"under that key, and invalidate {second['id']})."
    )
    assert first["similar"] == []


def test_the_same_tool_call_twice_writes_once(client, org):
    arguments = {"key": "tone", "fact": "formal", "run_id": "r1", "tool_call_id": "c1"}
    first = ok(client, org.acme_secret, "remember", arguments)
    result = call(client, org.acme_secret, "remember", arguments)
    assert wire.structured(result) == first
    assert result["content"][0]["text"] == f"Already remembered in this run: tone ({first['id']})."
    assert Memory.objects.filter(key="tone").count() == 1
    assert [r.outcome for r in AccessLog.objects.filter(action="remember").order_by("id")] == [
        201,
        200,
    ]


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"key": "tone", "fact": "x" * 241}, "fact is 241 characters; the limit is 240 characters"),
        ({"key": "tone", "fact": "two\nlines"}, None),
        ({"key": "tone", "fact": "   "}, None),
        ({"key": "Tone!", "fact": "formal"}, None),
    ],
)
def test_a_malformed_remember_is_the_apis_422_and_writes_nothing(client, org, arguments, message):
    rest = client.post(
        "/api/v1/memories",
        {"actor": "u1", **arguments},
        content_type="application/json",
        headers=bearer(org.acme_secret),
    )
    before = stored()
    text = refused(client, org.acme_secret, "remember", arguments)
    assert rest.status_code == 422 and text == rest.json()["detail"]
    if message:
        assert text == message
    assert stored() == before
    row = AccessLog.objects.filter(action="remember", channel="mcp").get()
    assert row.outcome == 422 and row.actor_ref == "acme/u1"


# --- search_memories, get_memory ---------------------------------------------------------------


def test_search_finds_within_the_chain_only(client, org, others):
    policy, _, _ = others
    result = call(client, org.acme_secret, "search_memories", {"query": "kilometres"})
    body = wire.structured(result)
    assert [item["id"] for item in body["items"]] == [policy.uid] and body["tier"] == "hybrid"
    assert result["content"][0]["text"] == (
        f"1 found (hybrid):\n- [tenant:acme] units: report in kilometres ({policy.uid})"
    )
    rest = client.get(
        "/api/v1/memories/search",
        {"actor": "u1", "q": "kilometres"},
        headers=bearer(org.acme_secret),
    )
    assert rest.json() == body
    rows = AccessLog.objects.filter(action="search").order_by("id")
    assert [r.channel for r in rows] == ["mcp", "api"]


def test_search_that_finds_nothing_says_so(client, org):
    result = call(client, org.acme_secret, "search_memories", {"query": "zebra"})
    assert result["content"][0]["text"] == "No memory matches."


def test_get_memory_reads_one_in_the_chain(client, org, others):
    policy, _, _ = others
    result = call(client, org.acme_secret, "get_memory", {"memory_id": policy.uid})
    assert wire.structured(result)["id"] == policy.uid
    assert result["content"][0]["text"].startswith(
        f"- [tenant:acme] units: report in kilometres ({policy.uid})\nstated by a person, "
    )
    row = AccessLog.objects.get(action="memory.get")
    assert (row.channel, row.outcome, row.memory_ids) == ("mcp", 200, [policy.uid])


@pytest.mark.parametrize("which", ["u2", "x9", "unknown", "malformed"])
def test_get_memory_of_anything_the_actor_cannot_see_is_not_found(client, org, others, which):
    _, u2_note, x9_note = others
    memory_id = {
        "u2": u2_note.uid,
        "x9": x9_note.uid,
        "unknown": "mem_00000000000000000000000000",
        "malformed": "../../etc",
    }[which]
    assert refused(client, org.acme_secret, "get_memory", {"memory_id": memory_id}) == (
        "memory not found"
    )
    row = AccessLog.objects.get(action="memory.get")
    assert row.outcome == 404 and row.channel == "mcp"
    assert row.memory_ids == ([] if which == "malformed" else [memory_id])


# invalidate_memory: tests/test_mcp_invalidate.py


# --- record_message ------------------------------------------------------------------------------


def test_record_message_stores_the_message_and_returns_its_id(client, org):
    result = call(
        client,
        org.acme_secret,
        "record_message",
        {"thread_id": "thr_1", "role": "user", "text": "hello", "run_id": "r1"},
    )
    body = wire.structured(result)
    message = Message.objects.get(uid=body["id"])
    assert (message.thread.ref, message.thread.actor, message.run_id) == ("thr_1", org.u1, "r1")
    assert set(body) == {"id", "thread_id", "run_id", "role", "created_at"}
    assert result["content"][0]["text"] == f"Recorded message {body['id']} in thread thr_1."
    row = AccessLog.objects.get(action="message")
    assert (row.channel, row.outcome, row.detail) == ("mcp", 201, {"chars": 5, "role": "user"})


# --- whose memories: the connection, never the model ------------------------------------------


TOOL_CALLS = [
    ("memory_context", {}),
    ("remember", {"key": "tone", "fact": "formal"}),
    ("search_memories", {"query": "units"}),
    ("get_memory", {"memory_id": "mem_00000000000000000000000000"}),
    ("invalidate_memory", {"memory_id": "mem_00000000000000000000000000", "reason": "wrong"}),
    ("record_message", {"thread_id": "t", "role": "user", "text": "hi"}),
]


@pytest.mark.parametrize("tool, arguments", TOOL_CALLS)
def test_an_actor_of_another_tenant_does_not_exist_for_the_key(
    client, org, others, logged, tool, arguments
):
    before = stored()
    text = refused(client, org.acme_secret, tool, arguments, path="/mcp/actors/globex/x9/")
    assert text == "actor 'globex/x9' not found"
    assert stored() == before  # nothing read, registered or written
    [row] = logged()
    assert (row.channel, row.action, row.outcome) == ("mcp", "actor.lookup", 404)
    assert row.detail == {"reason": "reach"}


@pytest.mark.parametrize("tool, arguments", TOOL_CALLS)
def test_an_actor_outside_a_narrower_reach_does_not_exist_for_the_key(
    client, org, operator, tool, arguments
):
    _, secret = keys.create_api_key("ops host", org.ops, principal=operator)
    before = stored()
    assert (
        refused(client, secret, tool, arguments, path="/mcp/actors/u2/") == "actor 'u2' not found"
    )
    assert stored() == before
    row = AccessLog.objects.get(action="actor.lookup")
    assert (row.actor_ref, row.outcome, row.detail) == ("acme/u2", 404, {"reason": "reach"})


@pytest.mark.parametrize("tool, arguments", TOOL_CALLS)
def test_no_tool_takes_an_actor(client, org, logged, tool, arguments):
    before = stored()
    text = refused(client, org.acme_secret, tool, {**arguments, "actor": "u2"})
    assert text == "unknown field: actor"
    assert stored() == before
    assert not logged().exists()


def test_no_tool_schema_names_a_person_a_scope_or_a_reach(client, org):
    message = wire.envelope("tools/list")
    tools = wire.post(client, "/mcp/", message, org.acme_secret).json()["result"]["tools"]
    for tool in tools:
        names = set(tool["inputSchema"]["properties"])
        assert not names & {"actor", "actor_ref", "ref", "user", "person", "scope", "reach"}


@pytest.mark.parametrize("tool, arguments", TOOL_CALLS)
def test_a_connection_that_names_no_actor_is_refused_and_logged(
    client, org, logged, tool, arguments
):
    before = stored()
    assert refused(client, org.acme_secret, tool, arguments, path="/mcp/") == NO_ACTOR
    assert stored() == before
    [row] = logged()
    assert (row.action, row.outcome, row.detail) == ("actor.lookup", 422, {"reason": "no_actor"})


def test_a_key_bound_to_an_actor_serves_it_at_mcp(client, org, operator):
    _, secret = keys.create_api_key("desk", org.acme, principal=operator, actor_ref="u2")
    body = ok(client, secret, "memory_context", path="/mcp/")
    assert body["scopes"][0] == "actor:acme/u2" and body["actor"] == "acme/u2"
    memory = ok(client, secret, "remember", {"key": "tone", "fact": "formal"}, path="/mcp/")
    assert memory["scope"] == "actor:acme/u2"
    assert ok(client, secret, "memory_context", path="/mcp/actors/u2/")["actor"] == "u2"


@pytest.mark.parametrize("tool, arguments", TOOL_CALLS)
def test_a_bound_key_reaches_no_other_actor_whatever_the_url_says(
    client, org, operator, tool, arguments
):
    key, secret = keys.create_api_key("desk", org.acme, principal=operator, actor_ref="u2")
    before = stored()
    assert refused(client, secret, tool, arguments) == "actor 'u1' not found"
    assert refused(client, secret, tool, arguments, path="/mcp/actors/u7/") == (
        "actor 'u7' not found"
    )
    assert stored() == before  # u7 was not registered either
    rows = AccessLog.objects.filter(principal=f"key:{key.prefix}").order_by("id")
    assert [(r.action, r.actor_ref, r.outcome) for r in rows] == [
        ("actor.lookup", "acme/u1", 404),
        ("actor.lookup", "acme/u7", 404),
    ]


def test_a_global_key_names_actors_qualified(client, org):
    body = ok(client, org.global_secret, "memory_context", path="/mcp/actors/globex/x9/")
    assert body["scopes"][0] == "actor:globex/x9" and body["actor"] == "globex/x9"


def test_a_malformed_ref_in_the_url_is_the_apis_422(client, org, logged):
    text = refused(client, org.acme_secret, "memory_context", path="/mcp/actors/-bad/")
    assert text.startswith("actor ref must be 1-128 characters")
    [row] = logged()
    assert (row.action, row.outcome, row.actor_ref) == ("actor.lookup", 422, None)


# --- the audit trail: the REST API's, but for the channel --------------------------------------


def _scenario_by_rest(client, secret, ref):
    def post(path, body):
        return client.post(path, body, content_type="application/json", headers=bearer(secret))

    post("/api/v1/turns", {"actor": ref, "run_id": "r0"})
    first = post("/api/v1/memories", {"actor": ref, "key": "tone", "fact": "formal"}).json()
    post("/api/v1/memories", {"actor": ref, "key": "tone", "fact": "casual", "run_id": "r1"})
    post("/api/v1/turns", {"actor": ref, "run_id": "r1", "query": "casual"})
    client.get("/api/v1/memories/search", {"actor": ref, "q": "casual"}, headers=bearer(secret))
    client.get(f"/api/v1/memories/{first['id']}", {"actor": ref}, headers=bearer(secret))
    post("/api/v1/threads/t1/messages", {"actor": ref, "role": "user", "text": "hi"})
    client.get("/api/v1/memories", {"actor": "globex/x9"}, headers=bearer(secret))


def _scenario_by_mcp(client, secret, ref):
    path = f"/mcp/actors/{ref}/"
    call(client, secret, "memory_context", {"run_id": "r0"}, path=path)
    first = ok(client, secret, "remember", {"key": "tone", "fact": "formal"}, path=path)
    ok(client, secret, "remember", {"key": "tone", "fact": "casual", "run_id": "r1"}, path=path)
    call(client, secret, "memory_context", {"run_id": "r1", "query": "casual"}, path=path)
    call(client, secret, "search_memories", {"query": "casual"}, path=path)
    call(client, secret, "get_memory", {"memory_id": first["id"]}, path=path)
    call(
        client,
        secret,
        "record_message",
        {"thread_id": "t1", "role": "user", "text": "hi"},
        path=path,
    )
    call(client, secret, "search_memories", {"query": "x"}, path="/mcp/actors/globex/x9/")


def _trail(since_access: int, since_ledger: int, ref: str) -> tuple[list, list]:
    """The rows written since, with this actor's name and every public id made neutral."""
    ids: dict[str, str] = {}

    def neutral(value):
        text = str(value).replace(f"acme/{ref}", "acme/ACTOR")
        return re.sub(
            r"(mem|msg|dig|run)_[0-9A-Z]{26}",
            lambda m: ids.setdefault(m.group(0), f"{m.group(1)}#{len(ids)}"),
            text,
        )

    access = [
        (
            r.channel,
            neutral(r.principal),
            neutral(r.actor_ref),
            r.action,
            r.outcome,
            neutral(r.scope),
            neutral(r.memory_ids),
            r.count,
            neutral(r.detail),
        )
        for r in AccessLog.objects.filter(id__gt=since_access).order_by("id")
    ]
    ledger = [
        (e.kind, neutral(e.scope), neutral(e.principal), neutral(e.actor_ref), neutral(e.payload))
        for e in LedgerEvent.objects.filter(id__gt=since_ledger).order_by("id")
    ]
    return access, ledger


def _marks():
    last_access = AccessLog.objects.order_by("-id").values_list("id", flat=True).first() or 0
    last_ledger = LedgerEvent.objects.order_by("-id").values_list("id", flat=True).first() or 0
    return last_access, last_ledger


def test_an_mcp_session_leaves_the_rest_apis_trail_but_for_the_channel(client, org):
    marks = _marks()
    _scenario_by_rest(client, org.acme_secret, "u5")
    rest_access, rest_ledger = _trail(*marks, "u5")
    marks = _marks()
    _scenario_by_mcp(client, org.acme_secret, "u6")
    mcp_access, mcp_ledger = _trail(*marks, "u6")
    assert len(rest_access) == 9 and len(rest_ledger) == 3
    assert mcp_ledger == rest_ledger
    assert {row[0] for row in rest_access} == {"api"} and {row[0] for row in mcp_access} == {"mcp"}
    assert [row[1:] for row in mcp_access] == [row[1:] for row in rest_access]
