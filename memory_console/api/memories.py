"""Memories: the agent's remember, the read-back, search, one memory, forget (docs/agents/api.md).

Every lookup goes through an access-scoped helper (`actor_for_key`, `memory_for_actor`):
an actor outside the key's reach, and a memory outside the actor's chain, are 404s that
look exactly like ids that never existed.
"""

from typing import Annotated

from ninja import Query, Router, Status

from memory_console.api.bodies import sent_as_is
from memory_console.api.schemas import (
    ActorRef,
    HostId,
    MemoryOut,
    MemoryPageOut,
    RememberIn,
    RememberOut,
    SearchOut,
    SearchQuery,
    errors,
)
from memory_core import actors, forgetting, visibility, writes
from memory_core.recall import readback
from memory_core.recall.search import search_memories

router = Router(tags=["memories"])

ActorParam = Annotated[
    ActorRef,
    Query(description="The actor the agent works for; 404 if unknown or outside the key's reach."),
]


@router.post(
    "",
    response={201: RememberOut, 200: RememberOut, **errors(403, 404, 422)},
    summary="Remember a fact about the actor (at actor:<actor>, authored agent)",
)
def remember(request, payload: RememberIn):
    """201 with the new version (`supersedes` names the live one it replaced), or 200 with
    the stored record when this (run_id, tool_call_id) was already written. There is no
    scope field: an agent writes only at its actor's own scope. `similar` names the actor's
    live memories under other keys that hold (nearly) the same fact."""
    principal = request.auth
    actor = actors.actor_for_key(payload.actor, principal.api_key, principal, register=True)
    chain = actors.chain_of(actor)
    written = writes.remember(
        actor,
        payload.key,
        payload.fact,
        principal=principal,
        run_id=payload.run_id,
        tool_call_id=payload.tool_call_id,
        thread_id=payload.thread_id,
        chain=chain,
    )
    shape = visibility.memory_shape_for_actor(written.memory, chain, written.wider)
    return sent_as_is({**shape, "similar": written.similar}, 201 if written.created else 200)


@router.get(
    "",
    response={200: MemoryPageOut, **errors(404, 422)},
    summary="Read back every key that applies to the actor",
)
def read_back(
    request,
    actor: ActorParam,
    thread_id: Annotated[
        HostId | None, Query(description="Only what was learned in this thread.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0)] = 0,
):
    """Precedence-resolved, with overrides, and not capped by MEMORY_MAX_LINES: a person
    must be able to see (and so forget) anything the agent could act on. `thread_id`
    keeps the memories learned in that thread; `count` counts every matching key."""
    principal = request.auth
    owner = actors.actor_for_key(actor, principal.api_key, principal)
    items, count = readback.read_back(
        owner, principal=principal, thread_id=thread_id, limit=limit, offset=offset
    )
    return sent_as_is({"items": items, "count": count})


# Declared before /{memory_id}, so "search" is never taken for a memory id.
@router.get(
    "/search",
    response={200: SearchOut, **errors(404, 422)},
    summary="Search the actor's chain",
)
def search(
    request,
    actor: ActorParam,
    q: Annotated[SearchQuery, Query(description="What to look for (at most 2000 characters).")],
    limit: Annotated[int, Query(ge=1, le=100)] = 10,
):
    """The best `limit` keys for `q`, precedence-resolved, plus every pinned key; `tier`
    says which search found them. Only the actor's chain is searched."""
    principal = request.auth
    owner = actors.actor_for_key(actor, principal.api_key, principal)
    items, tier = search_memories(owner, q, principal=principal, limit=limit)
    return sent_as_is({"items": items, "tier": tier})


@router.get(
    "/{memory_id}",
    response={200: MemoryOut, **errors(404, 422)},
    summary="One memory, if it is live and in the actor's chain",
)
def get_memory(request, memory_id: str, actor: ActorParam):
    principal = request.auth
    owner = actors.actor_for_key(actor, principal.api_key, principal)
    return visibility.read_memory(owner, memory_id, principal=principal)


@router.delete(
    "/{memory_id}",
    response={204: None, **errors(403, 404, 422)},
    summary="Forget a memory held at the actor's own scope",
)
def forget(request, memory_id: str, actor: ActorParam):
    """204: every version of the memory is erased and its text scrubbed from stored
    digests (their prompt lines read `[forgotten]`). 403: the actor sees it, but it is held
    at a wider scope (an administrator forgets it in the console). 404: the actor cannot
    see it (another actor's, another tenant's, unknown, already forgotten).

    What a forget leaves: the conversation messages posted to `/threads/…/messages` and the
    `query` text of stored turns are not searched or changed, even where they mention the
    fact; they stay until the thread is pruned (`manage.py prune_history`). To remove
    everything held about a person, an administrator erases the person in the console."""
    principal = request.auth
    owner = actors.actor_for_key(actor, principal.api_key, principal)
    # Any version, live or retired: a retired version of the actor's own memory still
    # names the lineage to erase, while an id outside the chain stays a 404.
    memory = visibility.visible_memory(
        owner, memory_id, principal=principal, action="forget", live_only=False
    )
    forgetting.forget_for_actor(memory, owner, actors.chain_of(owner), principal=principal)
    return Status(204, None)


# DELETE /memories/search is a forget of the memory whose id is "search": unknown, so 404 as
# for any other unknown id. Without this the path belongs to the search route alone, which
# answered 405 (its only method is GET), a status the document does not give for
# DELETE /memories/{memory_id}.
@router.delete(
    "/search",
    response={204: None, **errors(403, 404, 422)},
    include_in_schema=False,
)
def forget_named_search(request, actor: ActorParam):
    return forget(request, "search", actor)
