"""The one JSON shape of a memory (API.md), shared by the API, stored digests and exports."""

from collections.abc import Iterable, Sequence

from memory_core.facts import Record
from memory_core.models import Author, Memory, Thread


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
    if memory.author == Author.HUMAN:
        return {"user": memory.origin_user, "resolves": True}
    resolves = (
        not memory.origin_thread or (memory.origin_actor_id, memory.origin_thread) in resolving
    )
    return {
        "actor": memory.origin_actor.ref if memory.origin_actor_id else None,
        "thread_id": memory.origin_thread,
        "run_id": memory.origin_run,
        "tool_call_id": memory.origin_tool_call,
        "resolves": resolves,
    }


def override_shape(memory: Memory) -> dict:
    return {
        "id": memory.uid,
        "scope": memory.scope.token,
        "text": memory.text,
        "author": memory.author,
    }


def memory_shape(
    memory: Memory, overrides: Sequence[Memory] = (), resolving: set | None = None
) -> dict:
    if resolving is None:
        resolving = resolving_threads([memory])
    return {
        "id": memory.uid,
        "key": memory.key,
        "text": memory.text,
        "scope": memory.scope.token,
        "pinned": memory.pinned,
        "tags": list(memory.tags),
        "author": memory.author,
        "origin": origin(memory, resolving),
        "created_at": timestamp(memory.created_at),
        "supersedes": memory.supersedes.uid if memory.supersedes_id else None,
        "overrides": [override_shape(m) for m in overrides],
    }
