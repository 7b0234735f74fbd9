"""The read-back: every key that applies to an actor (GET /memories)."""

from memory_core.actors import chain_of
from memory_core.applied import chain_entries, entry_shapes
from memory_core.ledger import access_log
from memory_core.models import Actor, Memory


def read_back(actor: Actor, *, principal, thread_id: str | None = None, limit=50, offset=0):
    """Every key that applies to the actor, resolved, NOT capped by MEMORY_MAX_LINES:
    a person must be able to see (and so delete) anything the agent could act on."""
    chain = chain_of(actor)
    entries = chain_entries(chain)
    if thread_id is not None:
        learned_there = set(
            Memory.objects.filter(
                uid__in=[e.id for e in entries], origin_thread=thread_id
            ).values_list("uid", flat=True)
        )
        entries = [e for e in entries if e.id in learned_there]
    page = entries[offset : offset + limit]
    items = entry_shapes(page)
    access_log.record(
        principal,
        "read_back",
        200,
        actor_ref=actor.ref,
        memory_ids=[e.id for e in page],
        count=len(page),
    )
    return items, len(entries)
