"""Each operation of the agent API as a request to send, shared by Client and AsyncClient.

`OPERATIONS` names, for every client method, the API operation it calls (method and path)
and the class of its result; the functions below build the request
from the method's arguments, whose names are the API's field names. The server's test
suite compares this table, the methods' signatures and the result classes with its OpenAPI
document, so a field renamed or added on either side fails there.

Which calls are retried (`Call.repeatable`): reads; a turn (its `run_id` makes a repeat
return the stored answer); a remember carrying both `run_id` and `tool_call_id` (a repeat
returns the stored record); a PUT of an actor (it sets the same memberships again); and an
extraction (a repeat finds no new messages and writes nothing). A message, a remember
without both ids, and a forget are never retried: a repeat would write twice, or answer
404 for what the first call erased.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from memory_console_client import models


@dataclass(frozen=True)
class Operation:
    method: str
    path: str  # under /api/v1, with {placeholders}
    result: type | None  # None: no body (204)


OPERATIONS: dict[str, Operation] = {
    "turn": Operation("POST", "/turns", models.Turn),
    "remember": Operation("POST", "/memories", models.Remembered),
    "list_memories": Operation("GET", "/memories", models.MemoryPage),
    "get_memory": Operation("GET", "/memories/{memory_id}", models.Memory),
    "search": Operation("GET", "/memories/search", models.SearchResult),
    "forget": Operation("DELETE", "/memories/{memory_id}", None),
    "put_actor": Operation("PUT", "/actors/{ref}", models.Actor),
    "get_actor": Operation("GET", "/actors/{ref}", models.Actor),
    "record_message": Operation("POST", "/threads/{thread_id}/messages", models.Message),
    "extract": Operation("POST", "/threads/{thread_id}/extract", models.Extraction),
    "health": Operation("GET", "/health", models.Health),
}


@dataclass(frozen=True)
class Call:
    """One request, ready to send."""

    operation: Operation
    path: str
    params: dict[str, Any]
    body: dict[str, Any] | None
    repeatable: bool


def _segment(value: str) -> str:
    return quote(value, safe="")


def _ref(value: str) -> str:
    # A tenant-qualified ref (`acme/u1`) keeps its one slash: the route takes it as a path.
    return "/".join(_segment(part) for part in value.split("/"))


def _present(**fields: Any) -> dict[str, Any]:
    """The fields that were given (None means "not sent", never "send null")."""
    return {name: value for name, value in fields.items() if value is not None}


def _call(name: str, *, path: dict[str, str] | None = None, params=None, body=None, repeatable):
    operation = OPERATIONS[name]
    return Call(
        operation,
        operation.path.format(**(path or {})),
        params or {},
        body,
        repeatable,
    )


def turn(actor, run_id, *, query=None, max_memories=None, thread_id=None) -> Call:
    body = _present(
        actor=actor, run_id=run_id, query=query, max_memories=max_memories, thread_id=thread_id
    )
    return _call("turn", body=body, repeatable=True)


def remember(actor, key, fact, *, run_id=None, tool_call_id=None, thread_id=None) -> Call:
    body = _present(
        actor=actor,
        key=key,
        fact=fact,
        run_id=run_id,
        tool_call_id=tool_call_id,
        thread_id=thread_id,
    )
    return _call("remember", body=body, repeatable=run_id is not None and tool_call_id is not None)


def list_memories(actor, *, thread_id=None, limit=None, offset=None) -> Call:
    params = _present(actor=actor, thread_id=thread_id, limit=limit, offset=offset)
    return _call("list_memories", params=params, repeatable=True)


def get_memory(memory_id, actor) -> Call:
    return _call(
        "get_memory",
        path={"memory_id": _segment(memory_id)},
        params={"actor": actor},
        repeatable=True,
    )


def search(actor, q, *, limit=None) -> Call:
    return _call("search", params=_present(actor=actor, q=q, limit=limit), repeatable=True)


def forget(memory_id, actor) -> Call:
    return _call(
        "forget",
        path={"memory_id": _segment(memory_id)},
        params={"actor": actor},
        repeatable=False,
    )


def put_actor(ref, scopes, *, display_name=None) -> Call:
    if isinstance(scopes, str):
        raise TypeError(f"scopes is a list of scope tokens, e.g. [{scopes!r}]")
    body = {"scopes": list(scopes), **_present(display_name=display_name)}
    return _call("put_actor", path={"ref": _ref(ref)}, body=body, repeatable=True)


def get_actor(ref) -> Call:
    return _call("get_actor", path={"ref": _ref(ref)}, repeatable=True)


def record_message(thread_id, actor, role, text, *, run_id=None) -> Call:
    body = _present(actor=actor, role=role, text=text, run_id=run_id)
    return _call(
        "record_message", path={"thread_id": _segment(thread_id)}, body=body, repeatable=False
    )


def extract(thread_id, actor) -> Call:
    return _call(
        "extract", path={"thread_id": _segment(thread_id)}, body={"actor": actor}, repeatable=True
    )


def health() -> Call:
    return _call("health", repeatable=True)
