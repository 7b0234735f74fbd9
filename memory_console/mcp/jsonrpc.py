"""JSON-RPC 2.0 framing as MCP's streamable HTTP transport restricts it: one message per
POST (no batches since 2025-06-18), ids that are strings or integers (never null), params
that are an object.

Nothing here knows about tools or protocol revisions; a malformed message becomes an
RpcError carrying the code and the id (when one could be read), so every answer to bad
input is a JSON-RPC error object, never a traceback.
"""

import json
from dataclasses import dataclass, field
from typing import Any

# JSON-RPC 2.0.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# MCP (2026-07-28, spec-defined band -32020..-32099).
HEADER_MISMATCH = -32020
UNSUPPORTED_PROTOCOL_VERSION = -32022
# This server's own (the implementation-defined band -32000..-32019; the official SDK uses
# -32000 and -32001 internally, so these stay clear of them).
UNAUTHORIZED = -32010
UNAVAILABLE = -32011

RequestId = str | int


class RpcError(Exception):
    """A JSON-RPC error answer: `code`, a one-sentence `message`, optional `data`."""

    def __init__(self, code: int, message: str, *, data: Any = None, request_id=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.request_id = request_id


@dataclass(frozen=True)
class Message:
    """One decoded request (`id` set) or notification (`id` None)."""

    method: str
    id: RequestId | None
    params: dict = field(default_factory=dict)

    @property
    def is_notification(self) -> bool:
        return self.id is None


def _readable_id(decoded) -> RequestId | None:
    """The id of a message that is otherwise malformed, to echo in the error if usable."""
    if isinstance(decoded, dict):
        value = decoded.get("id")
        if isinstance(value, str | int) and not isinstance(value, bool):
            return value
    return None


def decode(body: bytes) -> Message:
    """The one message a POST body holds, or RpcError (parse error, invalid request)."""
    try:
        decoded = json.loads(body)
    except (ValueError, RecursionError):
        # ValueError covers bad UTF-8 and integer literals too long to convert;
        # RecursionError, arrays or objects nested thousands deep.
        raise RpcError(PARSE_ERROR, "Parse error: the body is not JSON") from None
    if isinstance(decoded, list):
        raise RpcError(
            INVALID_REQUEST,
            "Batch requests are not supported: send one JSON-RPC message per request",
        )
    if not isinstance(decoded, dict):
        raise RpcError(INVALID_REQUEST, "Invalid request: the body must be one JSON-RPC object")
    request_id = _readable_id(decoded)

    def invalid(why: str) -> RpcError:
        return RpcError(INVALID_REQUEST, f"Invalid request: {why}", request_id=request_id)

    if decoded.get("jsonrpc") != "2.0":
        raise invalid('"jsonrpc" must be "2.0"')
    method = decoded.get("method")
    if not isinstance(method, str) or not method:
        # Also a response or an error posted to the server, which clients must not send.
        raise invalid('"method" must be a non-empty string')
    if "id" in decoded and request_id is None:
        raise invalid('"id" must be a string or an integer')
    params = decoded.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise invalid('"params" must be an object')
    return Message(method=method, id=request_id, params=params)


def result(request_id: RequestId, value: dict) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def error(request_id: RequestId | None, code: int, message: str, data: Any = None) -> dict:
    body: dict = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": body}
