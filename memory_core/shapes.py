"""The one JSON shape of a memory (docs/agents/api.md), shared by the API, stored digests and
exports."""

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import NamedTuple

from memory_core.models import Author, Memory, Thread
from memory_core.rules.facts import Record


def timestamp(value) -> str | None:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value is not None else None


def to_record(memory: Memory) -> Record:
    return Record(
        id=memory.uid,
        scope=memory.scope.token,
        key=memory.key,
        text=memory.text,
        author=memory.author,
        pinned=memory.pinned,
        created_at=memory.created_at,
        expires_at=memory.expires_at,
    )


def resolving_threads(memories: Iterable[Memory]) -> set[tuple[int, str]]:
    """(actor id, thread ref) pairs of these memories' origins that are still stored."""
    pairs = {
        (m.origin_actor_id, m.origin_thread)
        for m in memories
        if m.origin_thread and m.origin_actor_id is not None
    }
    if not pairs:
        return set()
    actor_ids = {actor_id for actor_id, _ in pairs}
    refs = {ref for _, ref in pairs}
    stored = Thread.objects.filter(actor_id__in=actor_ids, ref__in=refs).values_list(
        "actor_id", "ref"
    )
    return set(stored) & pairs


def origin(memory: Memory, resolving: set[tuple[int, str]]) -> dict:
    # From the origin fields alone: callers need not have loaded the scope or predecessor.
    return _origin(
        memory.author,
        memory.origin_user,
        memory.origin_actor.ref if memory.origin_actor_id else None,
        memory.origin_thread,
        memory.origin_run,
        memory.origin_tool_call,
        thread_stored=(memory.origin_actor_id, memory.origin_thread) in resolving,
    )


class ShapeRow(NamedTuple):
    """What the API shows of one memory, as plain values: read straight from SQL on the
    per-turn path (applied.SHAPE_ROWS), or taken from a Memory elsewhere (shape_row)."""

    pk: int
    uid: str
    key: str
    text: str
    scope: str
    pinned: bool
    tags: list
    author: str
    origin_user: str | None
    origin_actor: str | None
    origin_thread: str | None
    origin_run: str | None
    origin_tool_call: str | None
    created_at: datetime
    supersedes: str | None
    # The conversation the memory was learned in is still stored.
    thread_stored: bool


def shape_row(memory: Memory, resolving: set[tuple[int, str]]) -> ShapeRow:
    return ShapeRow(
        pk=memory.pk,
        uid=memory.uid,
        key=memory.key,
        text=memory.text,
        scope=memory.scope.token,
        pinned=memory.pinned,
        tags=memory.tags,
        author=memory.author,
        origin_user=memory.origin_user,
        origin_actor=memory.origin_actor.ref if memory.origin_actor_id else None,
        origin_thread=memory.origin_thread,
        origin_run=memory.origin_run,
        origin_tool_call=memory.origin_tool_call,
        created_at=memory.created_at,
        supersedes=memory.supersedes.uid if memory.supersedes_id else None,
        thread_stored=(memory.origin_actor_id, memory.origin_thread) in resolving,
    )


def _origin(author, user, actor, thread, run, tool_call, *, thread_stored: bool) -> dict:
    if author == Author.HUMAN:
        return {"user": user, "resolves": True}
    return {
        "actor": actor,
        "thread_id": thread,
        "run_id": run,
        "tool_call_id": tool_call,
        "resolves": not thread or thread_stored,
    }


class Beaten(NamedTuple):
    """What an override shows of a wider value; a ShapeRow serves as one too."""

    uid: str
    scope: str
    text: str
    author: str


def shape(row: ShapeRow, overrides: Sequence[Beaten | ShapeRow] = ()) -> dict:
    """The API shape of a memory; `overrides` are the wider values it beats."""
    return {
        "id": row.uid,
        "key": row.key,
        "text": row.text,
        "scope": row.scope,
        "pinned": row.pinned,
        "tags": list(row.tags),
        "author": row.author,
        "origin": _origin(
            row.author,
            row.origin_user,
            row.origin_actor,
            row.origin_thread,
            row.origin_run,
            row.origin_tool_call,
            thread_stored=row.thread_stored,
        ),
        "created_at": timestamp(row.created_at),
        "supersedes": row.supersedes,
        "overrides": [
            {"id": o.uid, "scope": o.scope, "text": o.text, "author": o.author} for o in overrides
        ],
    }


def memory_shape(
    memory: Memory, overrides: Sequence[Memory] = (), resolving: set | None = None
) -> dict:
    if resolving is None:
        resolving = resolving_threads([memory])
    beaten = [Beaten(m.uid, m.scope.token, m.text, m.author) for m in overrides]
    return shape(shape_row(memory, resolving), beaten)
