"""LangGraph adapter (`pip install "memory-console-client[langgraph]"`).

`MemoryConsoleStore(client)` is a LangGraph `BaseStore` over the memories that apply to one
person, addressed by the namespace `("actors", ref)`:

- `put(ns, key, {"fact": ...})` remembers the fact at the person's own scope (the value may
  also carry `run_id`, `tool_call_id` and `thread_id`, as `remember` takes them);
- `get(ns, key)` is that key's live memory as an `Item` whose value is
  `{"fact", "scope", "author", "id", "pinned", "tags", "origin", "overrides", "supersedes"}`
  (the value that applies to the person: it may be held at a wider scope), or None;
- `search(ns, query=..., limit=...)` searches the person's chain: `SearchItem`s, best
  first, each with `score` = 1 / its rank (1.0, 0.5, 0.33 …); without a query, the
  read-back, unscored. A `filter` keeps the items whose value has those exact fields;
- `delete(ns, key)` forgets the key's memory (every version); one held at a wider scope
  is a person's to forget in the console: `Forbidden`. Deleting a key with no memory does
  nothing.

Any other namespace shape is a ValueError. The server keeps the time of each version only,
so an Item's `created_at` and `updated_at` are both the live version's. There is no TTL,
no `index` (the server indexes every fact itself) and no listing of namespaces (the API
lists no actors). Works with a `Client` (sync and async graph runs; async calls run the
client in a worker thread) or an `AsyncClient` (async runs only).

`memory_block(client, actor, run_id, query)` is the turn's prompt block, for a node's
system prompt (awaitable with an AsyncClient).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Coroutine, Generator, Iterable
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from memory_console_client import operations
from memory_console_client.client import AsyncClient, Client
from memory_console_client.models import Memory
from memory_console_client.operations import Call

__all__ = ["MemoryConsoleStore", "memory_block"]

ROOT = "actors"
PAGE = 200  # the read-back's largest page
SEARCH_MOST = 100  # the search's largest limit
PUT_FIELDS = {"fact", "run_id", "tool_call_id", "thread_id"}

# An operation as a generator: it yields the API calls it needs and receives their results,
# so one body serves the sync and the async client.
Steps = Generator[Call, Any, Any]


def memory_block(
    client: Client | AsyncClient, actor: str, run_id: str, query: str | None = None
) -> str | Coroutine[Any, Any, str]:
    """The turn's `block` ("" when nothing applies): paste it into the system prompt."""
    if isinstance(client, AsyncClient):
        return _block(client, actor, run_id, query)
    return client.turn(actor, run_id, query=query).block


async def _block(client: AsyncClient, actor: str, run_id: str, query: str | None) -> str:
    return (await client.turn(actor, run_id, query=query)).block


class MemoryConsoleStore(BaseStore):
    """A LangGraph store over one person's memories: namespace `("actors", ref)`."""

    def __init__(self, client: Client | AsyncClient) -> None:
        self.client = client

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        client = self.client
        if not isinstance(client, Client):
            raise TypeError(
                "MemoryConsoleStore over an AsyncClient serves async calls only "
                "(abatch, aget, asearch …; graph.ainvoke): give it a Client for sync ones"
            )
        return [_drive(self._steps(op), client) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        client = self.client
        if isinstance(client, AsyncClient):
            return [await _adrive(self._steps(op), client) for op in ops]
        return await asyncio.to_thread(self.batch, list(ops))

    def _steps(self, op: Op) -> Steps:
        if isinstance(op, GetOp):
            return _get(_actor(op.namespace), op.namespace, op.key)
        if isinstance(op, SearchOp):
            return _search(_actor(op.namespace_prefix), op)
        if isinstance(op, PutOp):
            actor = _actor(op.namespace)
            if op.value is None:
                return _delete(actor, op.key)
            return _put(actor, op.key, op.value)
        if isinstance(op, ListNamespacesOp):
            raise NotImplementedError(
                "MemoryConsoleStore cannot list namespaces: the API lists no actors"
            )
        raise TypeError(f"unknown store operation: {op!r}")


def _actor(namespace: tuple[str, ...]) -> str:
    if len(namespace) == 2 and namespace[0] == ROOT and namespace[1]:
        return namespace[1]
    raise ValueError(
        f"MemoryConsoleStore namespaces are ({ROOT!r}, <actor ref>), "
        f"e.g. ({ROOT!r}, 'u1'); got {namespace!r}"
    )


def _drive(steps: Steps, client: Client) -> Any:
    try:
        call = next(steps)
        while True:
            call = steps.send(client._send(call))
    except StopIteration as done:
        return done.value


async def _adrive(steps: Steps, client: AsyncClient) -> Any:
    try:
        call = next(steps)
        while True:
            call = steps.send(await client._send(call))
    except StopIteration as done:
        return done.value


def _value(memory: Memory) -> dict[str, Any]:
    return {
        "fact": memory.text,
        "scope": memory.scope,
        "author": memory.author,
        "id": memory.id,
        "pinned": memory.pinned,
        "tags": list(memory.tags),
        "origin": dataclasses.asdict(memory.origin),
        "overrides": [dataclasses.asdict(override) for override in memory.overrides],
        "supersedes": memory.supersedes,
    }


def _item(namespace: tuple[str, ...], memory: Memory) -> Item:
    return Item(
        value=_value(memory),
        key=memory.key,
        namespace=namespace,
        created_at=memory.created_at,
        updated_at=memory.created_at,
    )


def _search_item(namespace: tuple[str, ...], memory: Memory, score: float | None) -> SearchItem:
    return SearchItem(
        namespace, memory.key, _value(memory), memory.created_at, memory.created_at, score
    )


def _every_memory(actor: str) -> Steps:
    """The whole read-back, page by page."""
    memories: list[Memory] = []
    while True:
        page = yield operations.list_memories(actor, limit=PAGE, offset=len(memories))
        memories.extend(page.items)
        if not page.items or len(memories) >= page.count:
            return memories


def _find(actor: str, key: str) -> Steps:
    for memory in (yield from _every_memory(actor)):
        if memory.key == key:
            return memory
    return None


def _get(actor: str, namespace: tuple[str, ...], key: str) -> Steps:
    memory = yield from _find(actor, key)
    return None if memory is None else _item(namespace, memory)


def _put(actor: str, key: str, value: Any) -> Steps:
    unknown = set(value) - PUT_FIELDS
    fact = value.get("fact")
    if unknown or not isinstance(fact, str):
        raise ValueError(
            "MemoryConsoleStore.put takes {'fact': str} (and optionally run_id, "
            f"tool_call_id, thread_id); got the fields {sorted(value)}"
        )
    yield operations.remember(
        actor,
        key,
        fact,
        run_id=value.get("run_id"),
        tool_call_id=value.get("tool_call_id"),
        thread_id=value.get("thread_id"),
    )
    return None


def _delete(actor: str, key: str) -> Steps:
    memory = yield from _find(actor, key)
    if memory is not None:
        yield operations.forget(memory.id, actor)
    return None


def _search(actor: str, op: SearchOp) -> Steps:
    namespace = op.namespace_prefix
    if op.limit <= 0:
        return []
    if op.query:
        found = yield operations.search(
            actor, op.query, limit=max(1, min(SEARCH_MOST, op.offset + op.limit))
        )
        ranked = [
            _search_item(namespace, memory, 1.0 / rank)
            for rank, memory in enumerate(found.items, start=1)
        ]
    elif op.filter:
        ranked = [
            _search_item(namespace, memory, None) for memory in (yield from _every_memory(actor))
        ]
    else:
        page = yield operations.list_memories(actor, limit=min(PAGE, op.limit), offset=op.offset)
        return [_search_item(namespace, memory, None) for memory in page.items]
    if op.filter:
        ranked = [item for item in ranked if _matches(item.value, op.filter)]
    return ranked[op.offset : op.offset + op.limit]


def _matches(value: dict[str, Any], wanted: dict[str, Any]) -> bool:
    return all(value.get(field) == expected for field, expected in wanted.items())
