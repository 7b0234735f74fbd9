"""The MCP endpoint's HTTP and JSON-RPC layers, with requests built to the spec by hand.

Bad input of every kind (methods, keys, media types, JSON that is not a request, batches,
headers that disagree with the body, unknown methods and tools, arguments of the wrong type
or size) is a JSON-RPC error or a 4xx, never a 5xx, and writes nothing but, where a key was
presented, the refusal's own access-log row. The tools themselves: tests/test_mcp_tools.py;
the official SDK's client against gunicorn: tests/test_mcp_sdk.py.
"""

import base64
import json
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_console.mcp.tools import TOOLS
from memory_core.accounts import keys
from memory_core.models import AccessLog, Actor, Digest, LedgerEvent, Memory, Message, Thread
from tests import mcp_wire as wire
from tests.mcp_wire import HANDSHAKE, MODERN, envelope, post

URL = "/mcp/actors/u1/"
MIB = 1024 * 1024
TOOL_NAMES = [
    "memory_context",
    "remember",
    "search_memories",
    "get_memory",
    "invalidate_memory",
    "record_message",
]


def stored():
    """Row counts of everything a call could write, the access log included."""
    return {
        model.__name__: model.objects.count()
        for model in (Memory, Digest, Message, Thread, Actor, LedgerEvent, AccessLog)
    }


def rpc_error(response, status: int, code: int, request_id=None) -> dict:
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert set(body) == {"jsonrpc", "id", "error"} and body["jsonrpc"] == "2.0"
    assert body["id"] == request_id
    assert body["error"]["code"] == code
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return body["error"]


# --- HTTP: method, origin, key, media types ------------------------------------------------


@pytest.mark.parametrize("method", ["get", "delete", "put", "patch"])
@pytest.mark.parametrize("path", ["/mcp/", URL])
def test_anything_but_post_is_405_with_allow(client, org, method, path):
    before = stored()
    response = getattr(client, method)(path, headers={"Authorization": f"Bearer {org.acme_secret}"})
    rpc_error(response, 405, -32600)
    assert response["Allow"] == "POST"
    assert stored() == before


@pytest.mark.parametrize(
    "authorization",
    [None, "Bearer", "Bearer mc_not-a-key", "Basic dXNlcjpwdw==", "bearer ", "mc_no-scheme"],
)
def test_without_a_live_key_it_is_401_and_nothing_is_logged(client, org, authorization):
    before = stored()
    headers = {"Authorization": authorization} if authorization else {}
    response = post(client, URL, envelope("tools/list"), None, headers=headers)
    error = rpc_error(response, 401, -32010)
    assert error["message"] == "Unauthorized: send Authorization: Bearer <API key>"
    assert response["WWW-Authenticate"] == 'Bearer realm="memory-console"'
    assert stored() == before  # as the API: no principal, no access-log row


def test_a_revoked_key_is_401(client, org, operator):
    keys.revoke_api_key(org.acme_key, principal=operator)
    response = post(client, URL, envelope("tools/list"), org.acme_secret)
    rpc_error(response, 401, -32010)


def test_the_scheme_is_case_insensitive(client, org):
    message = envelope("tools/list")
    response = post(
        client, URL, message, None, headers={"Authorization": f"bearer {org.acme_secret}"}
    )
    assert response.status_code == 200


@pytest.mark.parametrize(
    "origin, status",
    [
        ("https://evil.example", 403),
        ("http://localhost.evil.example:8000", 403),
        ("null", 403),
        ("http://localhost:8000", 200),
        ("http://127.0.0.1:9999", 200),
        ("http://[::1]:8000", 200),
    ],
)
def test_a_browser_origin_must_be_this_site(client, org, origin, status):
    response = post(
        client, URL, envelope("tools/list"), org.acme_secret, headers={"Origin": origin}
    )
    assert response.status_code == status
    if status == 403:
        rpc_error(response, 403, -32600)


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "text/event-stream"]
)
def test_a_body_that_is_not_json_is_415(client, org, content_type):
    before = stored()
    response = post(
        client,
        URL,
        envelope("tools/list"),
        org.acme_secret,
        headers={"Content-Type": content_type},
    )
    rpc_error(response, 415, -32600)
    assert stored() == before


def test_json_with_a_charset_is_json(client, org):
    headers = {"Content-Type": "application/json; charset=utf-8"}
    response = post(client, URL, envelope("tools/list"), org.acme_secret, headers=headers)
    assert response.status_code == 200


@pytest.mark.parametrize(
    "accept, status",
    [
        ("text/html", 406),
        ("text/event-stream", 406),
        ("application/json;q=0", 406),
        ("application/json", 200),
        ("application/json, text/event-stream", 200),
        ("*/*", 200),
        ("application/*;q=0.5", 200),
        ("", 200),
    ],
)
def test_a_client_that_will_not_take_json_is_406(client, org, accept, status):
    response = post(
        client, URL, envelope("tools/list"), org.acme_secret, headers={"Accept": accept}
    )
    assert response.status_code == status
    if status == 406:
        rpc_error(response, 406, -32600)


def test_a_body_over_1_mib_is_a_json_rpc_413_before_it_is_read(client, org):
    before = stored()
    arguments = {"thread_id": "t", "role": "user", "text": "x" * MIB}
    message = envelope("tools/call", {"name": "record_message", "arguments": arguments})
    response = post(client, URL, message, org.acme_secret)
    error = rpc_error(response, 413, -32600)
    assert error["message"].endswith(f"the limit is {MIB} bytes")
    assert stored() == before


@pytest.mark.parametrize("path", ["/mcp/nothing", "/mcp/actors/", "/mcp/actors/a/b/c/"])
def test_other_paths_under_mcp_are_a_json_404(client, org, path):
    response = post(client, path, envelope("tools/list"), org.acme_secret)
    rpc_error(response, 404, -32600)


@pytest.mark.parametrize("path", ["/mcp", "/mcp/", "/mcp/actors/u1", "/mcp/actors/acme/u1"])
def test_the_endpoint_answers_with_or_without_a_trailing_slash(client, org, path):
    response = post(client, path, envelope("tools/list"), org.acme_secret)
    assert response.status_code == 200


# --- JSON-RPC framing ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"{", id="truncated"),
        pytest.param(b"", id="empty"),
        pytest.param(b"\xff\xfe{}", id="not-utf8"),
        pytest.param(("[" * 100_000 + "]" * 100_000).encode(), id="nested-100000"),
        pytest.param(b'{"jsonrpc": "2.0", "id": ' + b"9" * 5000 + b"}", id="huge-integer"),
    ],
)
def test_a_body_that_is_not_json_is_a_parse_error(client, org, body):
    before = stored()
    started = time.monotonic()
    response = post(client, URL, body, org.acme_secret)
    assert time.monotonic() - started < 2
    rpc_error(response, 400, -32700)
    assert stored() == before


@pytest.mark.parametrize("revision", [MODERN, HANDSHAKE, None])
def test_a_batch_is_refused(client, org, revision):
    batch = [envelope("tools/list", revision=revision or HANDSHAKE)] * 2
    response = post(client, URL, batch, org.acme_secret, revision=revision)
    error = rpc_error(response, 400, -32600)
    assert "Batch" in error["message"]


@pytest.mark.parametrize(
    "message, echoed",
    [
        ("just a string", None),
        (42, None),
        ({"id": 1, "method": "tools/list"}, 1),  # no "jsonrpc"
        ({"jsonrpc": "1.0", "id": 2, "method": "tools/list"}, 2),
        ({"jsonrpc": "2.0", "id": 3}, 3),  # no method
        ({"jsonrpc": "2.0", "id": 4, "method": 7}, 4),
        ({"jsonrpc": "2.0", "id": None, "method": "tools/list"}, None),
        ({"jsonrpc": "2.0", "id": True, "method": "tools/list"}, None),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}, None),
        ({"jsonrpc": "2.0", "id": "p", "method": "tools/list", "params": [1]}, "p"),
        ({"jsonrpc": "2.0", "id": 5, "result": {}}, 5),  # a response posted to the server
    ],
)
def test_a_message_that_is_not_a_request_is_an_invalid_request(client, org, message, echoed):
    before = stored()
    response = post(client, URL, message, org.acme_secret, revision=HANDSHAKE)
    rpc_error(response, 400, -32600, echoed)
    assert stored() == before


@pytest.mark.parametrize("revision", [MODERN, HANDSHAKE, None])
def test_a_notification_is_accepted_with_no_body(client, org, revision):
    before = stored()
    message = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    response = post(client, URL, message, org.acme_secret, revision=revision)
    assert response.status_code == 202 and response.content == b""
    assert stored() == before


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-11-25", "2027-01-01", "x"])
def test_an_unsupported_protocol_version_is_400_naming_the_supported_ones(client, org, version):
    message = envelope("tools/list", revision=HANDSHAKE)
    response = post(client, URL, message, org.acme_secret, revision=version)
    error = rpc_error(response, 400, -32022, message["id"])
    assert error["data"] == {"supported": [MODERN, HANDSHAKE], "requested": version}


# --- 2026-07-28: the envelope and the headers that mirror it ---------------------------------


def _modern(client, org, message, **headers):
    sent = wire.headers_for(message, org.acme_secret)
    sent.update(headers)
    sent = {k: v for k, v in sent.items() if v is not None}
    return client.post(URL, json.dumps(message), content_type="application/json", headers=sent)


def test_modern_requests_need_the_meta_envelope(client, org):
    message = envelope("tools/list")
    del message["params"]["_meta"]
    rpc_error(_modern(client, org, message), 400, -32602, message["id"])
    message = envelope("tools/list")
    del message["params"]["_meta"][wire.CLIENT_CAPABILITIES_META]
    rpc_error(_modern(client, org, message), 400, -32602, message["id"])
    message = envelope("tools/list")
    message["params"]["_meta"] = "not an object"
    rpc_error(_modern(client, org, message), 400, -32602, message["id"])


def test_the_version_header_must_match_the_envelope(client, org):
    message = envelope("tools/list")
    message["params"]["_meta"][wire.PROTOCOL_VERSION_META] = HANDSHAKE
    rpc_error(_modern(client, org, message), 400, -32020, message["id"])


@pytest.mark.parametrize("method_header", [None, "tools/call", "TOOLS/LIST"])
def test_the_method_header_must_match_the_body(client, org, method_header):
    message = envelope("tools/list")
    response = _modern(client, org, message, **{"Mcp-Method": method_header})
    rpc_error(response, 400, -32020, message["id"])


@pytest.mark.parametrize("name_header", [None, "get_memory", "=?base64?!!!?="])
def test_the_name_header_must_match_the_tool_called(client, org, name_header):
    before = stored()
    message = envelope("tools/call", {"name": "memory_context", "arguments": {}})
    response = _modern(client, org, message, **{"Mcp-Name": name_header})
    rpc_error(response, 400, -32020, message["id"])
    assert stored() == before  # checked before the tool runs


def test_a_name_header_may_come_base64_wrapped(client, org):
    message = envelope("tools/call", {"name": "search_memories", "arguments": {"query": "x"}})
    wrapped = "=?base64?" + base64.b64encode(b"search_memories").decode() + "?="
    response = _modern(client, org, message, **{"Mcp-Name": wrapped})
    assert response.status_code == 200 and response.json()["result"]["isError"] is False


def test_discover_names_the_revisions_served(client, org):
    message = envelope("server/discover")
    response = post(client, "/mcp/", message, org.acme_secret)
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["supportedVersions"] == [MODERN, HANDSHAKE]
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert "memory_context" in result["instructions"]
    assert result["resultType"] == "complete"
    assert result["ttlMs"] > 0 and result["cacheScope"] == "private"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "memory-console"
    assert "Mcp-Session-Id" not in response


@pytest.mark.parametrize("method", ["initialize", "ping", "resources/list", "prompts/get", "x"])
def test_a_method_this_revision_lacks_is_404_method_not_found(client, org, method):
    message = envelope(method)
    error = rpc_error(post(client, URL, message, org.acme_secret), 404, -32601, message["id"])
    assert method in error["message"]


# --- 2025-06-18: the stateless handshake -----------------------------------------------------


@pytest.mark.parametrize("offered", ["2025-11-25", "2025-06-18", "2025-03-26", "2026-07-28", 7])
def test_initialize_answers_2025_06_18_without_a_session(client, org, offered):
    message = envelope(
        "initialize", {"protocolVersion": offered, "capabilities": {}}, revision=HANDSHAKE
    )
    response = post(client, URL, message, org.acme_secret, revision=None)
    assert response.status_code == 200
    assert "Mcp-Session-Id" not in response
    result = response.json()["result"]
    assert result["protocolVersion"] == HANDSHAKE
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert result["serverInfo"] == {
        "name": "memory-console",
        "title": "Memory Console",
        "version": "1",
    }
    assert "resultType" not in result


def test_ping_answers_empty(client, org):
    message = envelope("ping", revision=HANDSHAKE)
    response = post(client, URL, message, org.acme_secret, revision=HANDSHAKE)
    assert response.json() == {"jsonrpc": "2.0", "id": message["id"], "result": {}}


@pytest.mark.parametrize("revision", [HANDSHAKE, None])
@pytest.mark.parametrize("method", ["server/discover", "resources/list", "sampling/createMessage"])
def test_an_unknown_method_is_method_not_found_in_a_200(client, org, revision, method):
    message = envelope(method, revision=HANDSHAKE)
    response = post(client, URL, message, org.acme_secret, revision=revision)
    rpc_error(response, 200, -32601, message["id"])


# --- tools/list --------------------------------------------------------------------------------


@pytest.mark.parametrize("revision", [MODERN, HANDSHAKE])
def test_tools_list_names_the_six_tools_with_their_schemas(client, org, revision):
    message = envelope("tools/list", revision=revision)
    result = post(client, "/mcp/", message, org.acme_secret, revision=revision).json()["result"]
    tools = result["tools"]
    assert [tool["name"] for tool in tools] == TOOL_NAMES
    for tool in tools:
        assert len(tool["description"]) > 100, tool["name"]
        schema = tool["inputSchema"]
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert tool["outputSchema"]["type"] == "object"
        assert tool["annotations"]["openWorldHint"] is False
    by_name = {tool["name"]: tool for tool in tools}
    required = {name: by_name[name]["inputSchema"].get("required", []) for name in by_name}
    assert required == {
        "memory_context": [],
        "remember": ["key", "fact"],
        "search_memories": ["query"],
        "get_memory": ["memory_id"],
        "invalidate_memory": ["memory_id", "reason"],
        "record_message": ["thread_id", "role", "text"],
    }
    properties = {name: set(by_name[name]["inputSchema"]["properties"]) for name in by_name}
    assert properties == {
        "memory_context": {"query", "run_id", "thread_id", "max_memories"},
        "remember": {"key", "fact", "run_id", "tool_call_id", "thread_id"},
        "search_memories": {"query", "limit"},
        "get_memory": {"memory_id"},
        "invalidate_memory": {"memory_id", "reason"},
        "record_message": {"thread_id", "role", "text", "run_id"},
    }
    fact = by_name["remember"]["inputSchema"]["properties"]["fact"]
    assert fact["maxLength"] == 240 and "240 characters" in fact["description"]
    assert by_name["search_memories"]["annotations"]["readOnlyHint"] is True
    assert by_name["invalidate_memory"]["annotations"]["destructiveHint"] is True
    assert by_name["invalidate_memory"]["inputSchema"]["properties"]["reason"]["maxLength"] == 500
    if revision == MODERN:
        assert result["resultType"] == "complete" and result["cacheScope"] == "private"
    else:
        assert set(result) == {"tools"}


def test_the_fact_schema_follows_the_setting(client, org, settings):
    settings.MEMORY_MAX_FACT_CHARS = 100
    result = post(client, "/mcp/", envelope("tools/list"), org.acme_secret).json()["result"]
    remember = next(tool for tool in result["tools"] if tool["name"] == "remember")
    assert remember["inputSchema"]["properties"]["fact"]["maxLength"] == 100


def test_a_cursor_is_refused_every_tool_is_on_the_first_page(client, org):
    message = envelope("tools/list", {"cursor": "abc"})
    rpc_error(post(client, URL, message, org.acme_secret), 400, -32602, message["id"])


# --- tools/call: the protocol's refusals -------------------------------------------------------


@pytest.mark.parametrize("revision, status", [(MODERN, 400), (HANDSHAKE, 200)])
def test_an_unknown_tool_is_invalid_params(client, org, revision, status):
    before = stored()
    message = envelope("tools/call", {"name": "delete_everything"}, revision=revision)
    error = rpc_error(
        post(client, URL, message, org.acme_secret, revision=revision),
        status,
        -32602,
        message["id"],
    )
    assert error["message"] == "Unknown tool: 'delete_everything'"
    assert stored() == before


def test_a_huge_tool_name_is_echoed_cut_short(client, org):
    message = envelope("tools/call", {"name": "x" * 100_000}, revision=HANDSHAKE)
    response = post(client, URL, message, org.acme_secret, revision=HANDSHAKE)
    error = rpc_error(response, 200, -32602, message["id"])
    assert len(error["message"]) < 120


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"name": 5},
        {"name": "remember", "arguments": ["key", "fact"]},
        {"name": "get_memory", "arguments": "x"},
    ],
)
def test_a_call_without_a_name_or_with_arguments_not_an_object_is_invalid_params(
    client, org, params
):
    message = envelope("tools/call", params, revision=HANDSHAKE)
    response = post(client, URL, message, org.acme_secret, revision=HANDSHAKE)
    rpc_error(response, 200, -32602, message["id"])


@pytest.mark.parametrize(
    "tool, arguments, message",
    [
        ("remember", {"key": 5, "fact": "x"}, "key: Input should be a valid string"),
        ("remember", {"fact": "x"}, "key: required"),
        ("remember", {"key": "k", "fact": "x", "actor": "u2"}, "unknown field: actor"),
        ("remember", {"key": "k", "fact": "x", "scope": "global"}, "unknown field: scope"),
        (
            "search_memories",
            {"query": "x", "limit": "10"},
            "limit: Input should be a valid integer",
        ),
        (
            "search_memories",
            {"query": "x", "limit": 101},
            "limit: Input should be less than or equal to 100",
        ),
        (
            "search_memories",
            {"query": "x", "limit": True},
            "limit: Input should be a valid integer",
        ),
        (
            "memory_context",
            {"max_memories": 0},
            "max_memories: Input should be greater than or equal to 1",
        ),
        (
            "memory_context",
            {"run_id": "r" * 129},
            "run_id: String should have at most 128 characters",
        ),
        ("memory_context", {"run_id": ""}, "run_id: String should have at least 1 character"),
        ("get_memory", {"memory_id": ["mem_x"]}, "memory_id: Input should be a valid string"),
        (
            "record_message",
            {"thread_id": "t", "role": "system", "text": "x"},
            "role: Input should be 'user', 'assistant' or 'tool'",
        ),
        ("remember", {"key": "k", "fact": "nul\x00here"}, "fact: must not contain NUL characters"),
    ],
)
def test_arguments_of_the_wrong_type_are_a_tool_error_naming_the_field(
    client, org, tool, arguments, message
):
    before = stored()
    result = wire.call(client, URL, org.acme_secret, tool, arguments)
    assert wire.refused(result) == message
    assert stored() == before  # refused before any service ran, as the API's schema 422s


def test_many_bad_arguments_are_summed_up_not_echoed(client, org):
    arguments = {"x" * 10_000: 1} | {f"field{i}": i for i in range(5000)}
    result = wire.call(client, URL, org.acme_secret, "get_memory", arguments)
    text = wire.refused(result)
    assert text.startswith("memory_id: required; unknown field: " + "x" * 80 + "…; ")
    assert len(text) < 400 and text.endswith("; and 4997 more")


@pytest.mark.parametrize(
    "tool, arguments, message",
    [
        (
            "remember",
            {"key": "k", "fact": "x" * 241},
            "fact is 241 characters; the limit is 240 characters",
        ),
        ("remember", {"key": "Not A Key", "fact": "x"}, None),
        ("memory_context", {"query": "q" * 2001}, None),
        ("search_memories", {"query": "q" * 50_000}, None),
        ("record_message", {"thread_id": "t", "role": "user", "text": "x" * 100_001}, None),
    ],
)
def test_oversized_or_malformed_values_are_the_services_refusals(
    client, org, tool, arguments, message
):
    before = stored()
    result = wire.call(client, URL, org.acme_secret, tool, arguments)
    text = wire.refused(result)
    if message:
        assert text == message
    after = stored()
    # The service refused and logged it (one access-log row); nothing else was written.
    assert after.pop("AccessLog") == before.pop("AccessLog") + 1
    assert after == before
    row = AccessLog.objects.order_by("-id").first()
    assert row.channel == "mcp" and row.outcome == 422


# --- never a 5xx ----------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    tool=st.sampled_from(sorted(TOOLS) + ["nope"]),
    arguments=json_values,
    revision=st.sampled_from([MODERN, HANDSHAKE]),
)
def test_random_arguments_never_make_a_5xx(client, org, tool, arguments, revision):
    message = envelope("tools/call", {"name": tool, "arguments": arguments}, revision=revision)
    response = post(client, URL, message, org.acme_secret, revision=revision)
    assert response.status_code in {200, 400}, response.content[:300]
    body = response.json()
    assert body["id"] == message["id"]
    assert ("result" in body) != ("error" in body)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    message=json_values,
    method=st.sampled_from(["tools/call", "tools/list", "initialize", "server/discover", "x"]),
    revision=st.sampled_from([MODERN, HANDSHAKE, None, "2099-01-01"]),
)
def test_random_messages_never_make_a_5xx(client, org, message, method, revision):
    if isinstance(message, dict) and message and len(message) % 2:
        message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": message}
    response = post(client, URL, message, org.acme_secret, revision=revision)
    assert 200 <= response.status_code < 500, response.content[:300]
    if response.status_code != 202:
        assert response["Content-Type"] == "application/json"
        assert response.json()["jsonrpc"] == "2.0"


# --- what Django and the database answer, in the endpoint's shape -----------------------------


class _Down(Exception):
    """A stand-in for psycopg's error behind Django's OperationalError."""

    sqlstate = None


def _operational(sqlstate=None):
    from django.db import OperationalError

    error = OperationalError("connection refused")
    cause = _Down()
    cause.sqlstate = sqlstate
    error.__cause__ = cause
    return error


@pytest.mark.parametrize(
    "where", ["memory_core.accounts.keys.authenticate", "memory_core.turns.resolve_turn"]
)
def test_an_unreachable_database_is_a_json_rpc_503(client, org, monkeypatch, where):
    def down(*args, **kwargs):
        raise _operational()

    monkeypatch.setattr(where, down)
    message = envelope("tools/call", {"name": "memory_context", "arguments": {}})
    response = post(client, URL, message, org.acme_secret)
    error = rpc_error(response, 503, -32011)
    assert error["message"] == "the database is unavailable; try again shortly"
    assert response["Retry-After"] == "5"


def test_a_deadlock_is_a_503_worth_a_retry(client, org, monkeypatch):
    def deadlocked(*args, **kwargs):
        raise _operational("40P01")

    monkeypatch.setattr("memory_core.writes.remember", deadlocked)
    message = envelope("tools/call", {"name": "remember", "arguments": {"key": "k", "fact": "f"}})
    error = rpc_error(post(client, URL, message, org.acme_secret), 503, -32011)
    assert "conflict" in error["message"]


def test_a_bug_is_a_json_rpc_500_without_a_traceback(org, monkeypatch):
    from django.test import Client

    def broken(*args, **kwargs):
        raise RuntimeError("a bug, with a secret in its message")

    monkeypatch.setattr("memory_core.recall.search.search_memories", broken)
    monkeypatch.setattr("memory_console.mcp.tools.search_chain", broken)
    client = Client(raise_request_exception=False)
    message = envelope("tools/call", {"name": "search_memories", "arguments": {"query": "x"}})
    response = post(client, URL, message, org.acme_secret)
    error = rpc_error(response, 500, -32603)
    assert error["message"] == "Internal Server Error"
    assert b"secret" not in response.content and b"Traceback" not in response.content


def test_a_host_not_allowed_is_a_json_rpc_400(client, org):
    response = post(
        client, URL, envelope("tools/list"), org.acme_secret, headers={"Host": "evil.example"}
    )
    rpc_error(response, 400, -32600)
