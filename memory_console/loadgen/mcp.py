"""An MCP tool call as a 2026-07-28 client sends it over streamable HTTP, for the bench:
the JSON-RPC body with its per-request `_meta` envelope, and the headers that mirror it.

Stateless, one POST per call (no handshake to amortise), the revision with the most to
check per request: what an MCP client's steady state costs the server.
"""

import itertools

REVISION = "2026-07-28"
_ids = itertools.count(1)


def tool_call(tool: str, arguments: dict) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": next(_ids),
        "method": "tools/call",
        "params": {
            "name": tool,
            "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": REVISION,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }


def headers(secret: str, tool: str) -> dict:
    return {
        "Authorization": f"Bearer {secret}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": REVISION,
        "Mcp-Method": "tools/call",
        "Mcp-Name": tool,
    }


def tool_error(response) -> str | None:
    """Why an answered call failed (a JSON-RPC error or a tool error), or None."""
    if response.status != 200:
        return f"HTTP {response.status}: {response.error or response.body[:300]!r}"
    body = response.json()
    if "error" in body:
        return f"JSON-RPC error {body['error']}"
    if body["result"].get("isError"):
        return f"tool error: {body['result']['content'][0]['text']}"
    return None
