"""What an actor may see of one memory: the access-scoped lookup the API and the console
use instead of a bare get (a memory outside the actor's chain is a 404, never a 403)."""

from memory_core.actors import chain_of
from memory_core.applied import resolved
from memory_core.errors import NotFound
from memory_core.models import Actor, Memory
from memory_core.shapes import memory_shape


def memory_shape_for_actor(memory: Memory, chain) -> dict:
    """The memory shape with `overrides` as the actor's read-back shows them: the live
    values of the same key at the scopes of the chain wider than the memory's own,
    narrowest first (the precedence resolver orders them)."""
    position = chain.index(memory.scope.token)
    wider = chain[position + 1 :]
    rows = list(
        Memory.objects.live().in_chain(wider).filter(key=memory.key).select_related("scope")
    )
    entries = resolved(chain, rows)  # one key, so at most one entry
    beaten = [entries[0].winner, *entries[0].overrides] if entries else []
    by_uid = {m.uid: m for m in rows}
    return memory_shape(memory, [by_uid[record.id] for record in beaten])


def memory_for_actor(actor: Actor, uid: str, *, live_only: bool = True) -> Memory:
    """A memory as `actor` may see it: at a scope in its chain (live unless asked), else 404.

    Views and handlers call this instead of a bare lookup, so a missing visibility check is
    a missing helper call.
    """
    rows = Memory.objects.select_related("scope", "origin_actor", "supersedes").in_chain(
        chain_of(actor)
    )
    if live_only:
        rows = rows.live()
    memory = rows.filter(uid=uid).first()
    if memory is None:
        raise NotFound("memory not found")
    return memory
