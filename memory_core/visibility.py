"""What an actor may see of one memory: the access-scoped lookup the API and the console
use instead of a bare get (a memory outside the actor's chain is a 404, never a 403)."""

import re

from django.utils import timezone

from memory_core.actors import chain_of
from memory_core.applied import CHAIN_RECORDS
from memory_core.db import prepared
from memory_core.errors import NotFound
from memory_core.ledger import access_log
from memory_core.models import Actor, Memory
from memory_core.rules.facts import Record
from memory_core.rules.precedence import resolve
from memory_core.shapes import Beaten, resolving_threads, shape, shape_row

# The live values of one key at some scopes of a chain (as facts.Records), by a prepared
# statement: every API write answers with the shape this reads for.
KEY_IN_SCOPES = f"{CHAIN_RECORDS} AND m.key = %(key)s"


def memory_shape_for_actor(memory: Memory, chain, wider: list[Record] | None = None) -> dict:
    """The memory shape with `overrides` as the actor's read-back shows them: the live
    values of the same key at the scopes of the chain wider than the memory's own,
    narrowest first (the precedence resolver orders them). `wider`: those values, when the
    caller already read them (writes.remember's statement does)."""
    if wider is None:
        position = chain.index(memory.scope.token)
        scopes = chain[position + 1 :]
        rows = prepared.fetch_all(KEY_IN_SCOPES, {"chain": list(scopes), "key": memory.key})
        wider = [Record(*row) for row in rows]
    entries = resolve(wider, chain, now=timezone.now())
    beaten = [entries[0].winner, *entries[0].overrides] if entries else []
    overrides = [Beaten(r.id, r.scope, r.text, r.author) for r in beaten]
    return shape(shape_row(memory, resolving_threads([memory])), overrides)


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


# The shape of memory_core.rules.ids.memory_id(). Anything else cannot name a memory, and is not
# copied into the access log (whose memory_ids column holds ids, not arbitrary input).
MEMORY_ID_RE = re.compile(r"mem_[0-9A-Z]{26}")


def visible_memory(actor: Actor, uid: str, *, principal, action: str, live_only: bool) -> Memory:
    """The memory as the actor may see it; a 404, access-logged, for anything else."""
    well_formed = MEMORY_ID_RE.fullmatch(uid) is not None
    try:
        if not well_formed:
            raise NotFound("memory not found")
        return memory_for_actor(actor, uid, live_only=live_only)
    except NotFound:
        access_log.record(
            principal,
            action,
            404,
            actor_ref=actor.ref,
            memory_ids=[uid] if well_formed else [],
            detail={"reason": "not_found"},
        )
        raise


def read_memory(actor: Actor, uid: str, *, principal) -> dict:
    """GET /memories/{id}: the live memory's shape, with its read logged (or its 404)."""
    memory = visible_memory(actor, uid, principal=principal, action="memory.get", live_only=True)
    access_log.record(
        principal,
        "memory.get",
        200,
        actor_ref=actor.ref,
        scope=memory.scope.token,
        memory_ids=[memory.uid],
        count=1,
    )
    return memory_shape_for_actor(memory, chain_of(actor))
