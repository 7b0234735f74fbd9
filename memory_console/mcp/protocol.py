"""MCP over streamable HTTP, stateless: two protocol revisions, one JSON answer per POST.

- **2026-07-28**: no handshake. Every request carries its revision in the
  `MCP-Protocol-Version` header and again in `params._meta` (with the client's capabilities),
  its method in `Mcp-Method` and, for tools/call, the tool's name in `Mcp-Name`; a header
  that disagrees with the body is a HEADER_MISMATCH. `server/discover` names the revisions
  served. Results carry `resultType` and the server's identity in `_meta`; errors carry an
  HTTP status (400, or 404 for an unknown method).
- **2025-06-18**: `initialize` answers without a session id (the stateless mode that
  revision allows), after which every request stands alone. A client offering a later
  handshake revision (the official SDK offers 2025-11-25) is answered with 2025-06-18, which
  it accepts; a request without the header is served as this revision (clients of
  2025-03-26 send none). JSON-RPC errors travel in 200 answers, as that transport expects,
  except for a body that is not a request at all (400).

There is no session, no SSE stream and no server-to-client request: each POST gets one
application/json answer (or 202 with no body for a notification), so a gunicorn worker
serves it like any other view. Tool failures are tool results with `isError: true` and the
API's message; malformed protocol input is a JSON-RPC error; neither is ever a traceback.
"""

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import ValidationError

from memory_console.mcp import jsonrpc
from memory_console.mcp.arguments import describe
from memory_console.mcp.connection import Connection
from memory_console.mcp.jsonrpc import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    Message,
    RpcError,
)
from memory_console.mcp.tools import TOOLS, definitions
from memory_core.errors import DomainError

MODERN = "2026-07-28"
HANDSHAKE = "2025-06-18"
SUPPORTED = (MODERN, HANDSHAKE)

PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_META = "io.modelcontextprotocol/serverInfo"

SERVER_INFO = {"name": "memory-console", "title": "Memory Console", "version": "1"}
CAPABILITIES = {"tools": {"listChanged": False}}
# 2026-07-28's caching hints for discover and tools/list: the catalogue changes only with a
# deployment; private, since a listing is an answer to one key.
CACHE_HINTS = {"ttlMs": 300_000, "cacheScope": "private"}
INSTRUCTIONS = (
    "Memory Console keeps short facts about the person you are working for: notes at their "
    "own scope, and instructions people wrote for their team, their organisation or "
    "everyone. Call memory_context at the start of every turn and read its block as "
    "context. Use remember for durable facts about the person, one fact per key; correct a "
    "fact by remembering the same key again, and take a note that no longer holds out of "
    "use with invalidate_memory (a person can reinstate it; no tool erases anything). "
    "Whose memories these are is fixed by this connection: no tool takes a person."
)

# A 2026-07-28 error's HTTP status (its spec's table); other codes answer 200.
MODERN_STATUS = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}
# Errors that say the POST was not a usable request at all: 400 whatever the revision.
TRANSPORT_ERRORS = {PARSE_ERROR, INVALID_REQUEST, UNSUPPORTED_PROTOCOL_VERSION}


@dataclass(frozen=True)
class Answer:
    status: int
    body: dict | None  # None: 202 Accepted, no body (a notification)


def handle(body: bytes, headers: Mapping[str, str], connection: Connection) -> Answer:
    """One POST: `headers` keyed by lower-case name."""
    revision = None
    request_id = None
    try:
        message = jsonrpc.decode(body)
        request_id = message.id
        revision = revision_of(headers.get("mcp-protocol-version"))
        if message.is_notification:
            # No client notification asks this server for anything (there is no session
            # to initialise or request to cancel): acknowledged, as the transport says.
            return Answer(202, None)
        if revision == MODERN:
            check_envelope(message, headers)
        result = dispatch(message, revision, connection)
    except RpcError as error:
        request_id = error.request_id if error.request_id is not None else request_id
        return Answer(
            _status(error.code, revision),
            jsonrpc.error(request_id, error.code, error.message, error.data),
        )
    if revision == MODERN:
        result = {**result, "resultType": "complete", "_meta": {SERVER_INFO_META: SERVER_INFO}}
    return Answer(200, jsonrpc.result(message.id, result))


def _status(code: int, revision: str | None) -> int:
    if revision == MODERN:
        return MODERN_STATUS.get(code, 200)
    return 400 if code in TRANSPORT_ERRORS or revision is None else 200


def revision_of(header: str | None) -> str:
    if header is None:
        return HANDSHAKE
    if header not in SUPPORTED:
        raise RpcError(
            UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            data={"supported": list(SUPPORTED), "requested": cut(header)},
        )
    return header


def check_envelope(message: Message, headers: Mapping[str, str]) -> None:
    """2026-07-28: the per-request `_meta` envelope, and the headers that mirror the body
    (so a proxy routing on headers never sees one request while the server runs another)."""
    meta = message.params.get("_meta")
    if not isinstance(meta, dict) or any(
        key not in meta for key in (PROTOCOL_VERSION_META, CLIENT_CAPABILITIES_META)
    ):
        raise RpcError(
            INVALID_PARAMS,
            f"params._meta must carry {PROTOCOL_VERSION_META!r} and {CLIENT_CAPABILITIES_META!r}",
        )
    if meta[PROTOCOL_VERSION_META] != headers.get("mcp-protocol-version"):
        raise RpcError(HEADER_MISMATCH, "MCP-Protocol-Version header does not match params._meta")
    if headers.get("mcp-method") != message.method:
        raise RpcError(HEADER_MISMATCH, "Mcp-Method header does not match the method")
    if message.method == "tools/call":
        name = message.params.get("name")
        if name is not None and header_value(headers.get("mcp-name")) != name:
            raise RpcError(HEADER_MISMATCH, "Mcp-Name header does not match the tool's name")


_BASE64_SENTINEL = re.compile(r"=\?base64\?(.*)\?=")


def header_value(raw: str | None) -> str | None:
    """A header value as the client meant it: 2026-07-28 sends a value that is not plain
    printable ASCII as `=?base64?…?=` (UTF-8). A malformed one decodes to None."""
    if raw is None:
        return None
    wrapped = _BASE64_SENTINEL.fullmatch(raw)
    if wrapped is None:
        return raw
    try:
        return base64.b64decode(wrapped.group(1), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def dispatch(message: Message, revision: str, connection: Connection) -> dict:
    method, params = message.method, message.params
    if method == "tools/call":
        return call_tool(params, connection)
    if method == "tools/list":
        if params.get("cursor") is not None:
            raise RpcError(INVALID_PARAMS, "Invalid cursor: every tool is on the first page")
        listing = {"tools": definitions()}
        return {**listing, **CACHE_HINTS} if revision == MODERN else listing
    if revision == MODERN and method == "server/discover":
        return {
            "supportedVersions": list(SUPPORTED),
            "capabilities": CAPABILITIES,
            "instructions": INSTRUCTIONS,
            **CACHE_HINTS,
        }
    if revision == HANDSHAKE and method == "initialize":
        # Whatever the client offers, 2025-06-18 is the one handshake revision served; a
        # client that cannot speak it disconnects, as the revision says it may.
        return {
            "protocolVersion": HANDSHAKE,
            "capabilities": CAPABILITIES,
            "serverInfo": SERVER_INFO,
            "instructions": INSTRUCTIONS,
        }
    if revision == HANDSHAKE and method == "ping":
        return {}
    raise RpcError(METHOD_NOT_FOUND, f"Method not found: {cut(method)!r}")


def call_tool(params: dict, connection: Connection) -> dict:
    name = params.get("name")
    if not isinstance(name, str):
        raise RpcError(INVALID_PARAMS, "tools/call needs the tool's name")
    tool = TOOLS.get(name)
    if tool is None:
        raise RpcError(INVALID_PARAMS, f"Unknown tool: {cut(name)!r}")
    arguments = params.get("arguments")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise RpcError(INVALID_PARAMS, "arguments must be an object")
    # A tool's own failures are results, not protocol errors, so the model sees them and
    # can correct itself (bad arguments) or tell the person (a refusal).
    try:
        parsed = tool.arguments.model_validate(arguments)
    except ValidationError as error:
        return tool_error(describe(error))
    try:
        structured, text = tool.run(connection, parsed)
    except DomainError as error:
        return tool_error(error.message)
    return {
        "content": [{"type": "text", "text": text}],
        "structuredContent": structured,
        "isError": False,
    }


def tool_error(message: str) -> dict:
    return {"content": [{"type": "text", "text": message}], "isError": True}


def cut(value: str, limit: int = 80) -> str:
    """A client's string echoed in an error, cut short: it may be a megabyte long."""
    return value if len(value) <= limit else value[:limit] + "…"
