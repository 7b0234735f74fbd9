"""MCP requests built by hand, to the spec, for Django's test client.

(The end-to-end tests use the official SDK's client against a live server; these exercise
every corner of the protocol without one. Not named `mcp.py`: pytest puts tests/ on the
import path, and that would shadow the SDK.)
"""

import json
from itertools import count

MODERN = "2026-07-28"
HANDSHAKE = "2025-06-18"
PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"
ACCEPT = "application/json, text/event-stream"

_ids = count(1)


def envelope(method: str, params: dict | None = None, *, revision: str = MODERN) -> dict:
    """A JSON-RPC request as a client of `revision` sends it (2026-07-28: the `_meta`
    envelope in every request)."""
    params = dict(params or {})
    if revision == MODERN:
        params["_meta"] = {
            PROTOCOL_VERSION_META: MODERN,
            CLIENT_CAPABILITIES_META: {},
            "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "0"},
        }
    return {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": params}


def headers_for(message: dict, secret: str | None, *, revision: str | None = MODERN) -> dict:
    """The HTTP headers of a POST carrying `message` (2026-07-28 mirrors the method and the
    tool's name in headers; 2025-06-18 sends only its revision)."""
    headers = {"Accept": ACCEPT}
    if secret:
        headers["Authorization"] = f"Bearer {secret}"
    if revision is not None:
        headers["MCP-Protocol-Version"] = revision
    if revision == MODERN and isinstance(message, dict):
        headers["Mcp-Method"] = str(message.get("method"))
        name = (message.get("params") or {}).get("name")
        if isinstance(name, str):
            headers["Mcp-Name"] = name
    return headers


def post(client, path: str, message, secret: str | None, *, revision=MODERN, headers=None):
    """POST one message (any JSON, or raw bytes) to `path` as a client of `revision`."""
    body = message if isinstance(message, bytes) else json.dumps(message)
    sent = headers_for(message, secret, revision=revision)
    sent.update(headers or {})
    content_type = sent.pop("Content-Type", "application/json")
    # CONTENT_TYPE given outright: the test client leaves it out of a request with no body.
    return client.generic(
        "POST", path, body, content_type=content_type, headers=sent, CONTENT_TYPE=content_type
    )


def call(client, path: str, secret: str, tool: str, arguments: dict, *, revision=MODERN):
    """tools/call; returns the CallToolResult (asserting the HTTP and JSON-RPC layers)."""
    message = envelope("tools/call", {"name": tool, "arguments": arguments}, revision=revision)
    response = post(client, path, message, secret, revision=revision)
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert body["id"] == message["id"] and "error" not in body, body
    return body["result"]


def structured(result: dict) -> dict:
    """A successful tool result's structured content."""
    assert result["isError"] is False, result
    return result["structuredContent"]


def refused(result: dict) -> str:
    """A tool error's message (the API's `detail`)."""
    assert result["isError"] is True and "structuredContent" not in result, result
    [block] = result["content"]
    assert block["type"] == "text"
    return block["text"]
