"""What an actor's agent is given at the start of a turn (POST /turns) and the console's
block preview.

resolve_turn stores one digest per (actor, run_id): a repeat returns that digest unchanged,
whatever changed since, so a resumed run rebuilds the identical prompt.
"""

from dataclasses import dataclass, field
from functools import partial

import orjson
from django.conf import settings
from django.utils import timezone
from psycopg.types.json import Jsonb

from memory_core.actors import chain_of
from memory_core.applied import (
    chain_selection,
    entry_shapes,
    shown_ids,
)
from memory_core.changes import erased_as_gone
from memory_core.db import prepared
from memory_core.errors import Invalid
from memory_core.ledger import access_log
from memory_core.models import Actor, Digest
from memory_core.recall.search import check_query, ranked_selection
from memory_core.rules.block import render
from memory_core.rules.ids import digest_id
from memory_core.rules.inputs import host_id_problem, require

# A turn's whole write, as one statement (so one transaction, with no BEGIN or COMMIT
# round trips of its own):
# - `held` locks the memories the turn shows, FOR KEY SHARE, which conflicts only with
#   forget's FOR UPDATE: a forget that comes later waits for this statement to commit and
#   then scrubs the digest; one that committed first deleted a row, `held` comes up short,
#   nothing is written, and the caller composes the turn again;
# - the digest, unless this (actor, run_id) already has one (a repeat, or a concurrent
#   first request that committed first): then nothing is written and the caller returns
#   the stored one;
# - its lines, and its access-log row, only with a new digest.
# Lists go as binary parameters (%b): psycopg's text form of an array checks every element
# for characters to quote.
STORE_TURN = """
    WITH held AS (
        SELECT m.id FROM memory_core_memory m WHERE m.uid = ANY(%(shown)b) FOR KEY SHARE
    ), digest AS (
        INSERT INTO memory_core_digest
            (uid, actor_id, run_id, thread_ref, query, chain, block, entries, stats,
             pinned_omitted, created_at)
        SELECT %(uid)s, %(actor_id)s, %(run_id)s, %(thread_ref)s, %(query)s,
               %(chain)b::varchar[], %(block)s, %(entries)s, %(stats)s, %(pinned_omitted)s,
               %(now)s
        WHERE (SELECT count(*) FROM held) = cardinality(%(shown)b::text[])
        ON CONFLICT ON CONSTRAINT digest_one_per_actor_run DO NOTHING
        RETURNING id
    ), line AS (
        INSERT INTO memory_core_digestline (digest_id, n, text, memory_id, memory_uid)
        SELECT digest.id, l.n, l.text, l.memory_id, l.memory_uid
        FROM digest, unnest(%(n)b::int[], %(text)b::text[], %(memory_id)b::bigint[],
                            %(memory_uid)b::text[]) AS l(n, text, memory_id, memory_uid)
    ), access AS (
        INSERT INTO memory_core_accesslog
            (created_at, channel, principal, actor_ref, action, outcome, scope, memory_ids,
             count, detail, request_id)
        SELECT %(now)s, %(channel)s, %(principal)s, %(actor_ref)s, 'turn', 200, NULL,
               %(memory_ids)b::varchar[], %(count)s, %(detail)s, %(request_id)s
        FROM digest
    )
    SELECT (SELECT count(*) FROM held), (SELECT id FROM digest)
"""


# A turn's JSON parameters, written by orjson (a tenth of the standard library's time).
_jsonb = partial(Jsonb, dumps=orjson.dumps)


@dataclass
class Turn:
    run_id: str
    actor: str
    scopes: list[str]
    block: str
    entries: list[dict]
    lines: list[dict]
    stats: dict
    replayed: bool = False
    memory_ids: list[str] = field(default_factory=list)
    # Public id -> database id of each memory shown, so storing the digest needs no
    # second lookup.
    pk_by_uid: dict[str, int] = field(default_factory=dict, repr=False)

    def body(self) -> dict:
        """The API's TurnOut."""
        return {
            "run_id": self.run_id,
            "actor": self.actor,
            "scopes": self.scopes,
            "block": self.block,
            "entries": self.entries,
            "lines": self.lines,
            "stats": self.stats,
        }


def budget(max_memories: int | None) -> int:
    """max_memories may lower MEMORY_MAX_LINES, never raise it."""
    if max_memories is None:
        return settings.MEMORY_MAX_LINES
    # 0 would leave out every pinned memory (and raise the dashboard's alert for each).
    if max_memories < 1:
        raise Invalid("max_memories must be 1 or more")
    return min(max_memories, settings.MEMORY_MAX_LINES)


def compose(actor: Actor, run_id: str, query: str | None, max_memories: int | None) -> Turn:
    """The turn as it would be given now."""
    chain = chain_of(actor)
    limit = budget(max_memories)
    # Precedence and the budget applied in the database, the shown rows read by the same
    # statement (applied.chain_selection); with a query, the chain ranked for it first
    # (search.ranked_selection).
    if query:
        selection, rows = ranked_selection(chain, query, limit)
    else:
        selection, rows = chain_selection(chain, limit)
    wanted = shown_ids(selection.kept)
    if not wanted <= rows.keys():
        raise MemoryVanished  # forgotten between the two reads
    rendered = render(selection.kept, chain, selection.stats.partial)
    stats = selection.stats
    return Turn(
        run_id=run_id,
        actor=actor.ref,
        scopes=list(chain),
        block=rendered.block,
        entries=entry_shapes(selection.kept, rows),
        lines=[{"n": ln.n, "text": ln.text, "memory_id": ln.memory_id} for ln in rendered.lines],
        stats={
            "offered": stats.offered,
            "omitted": stats.omitted,
            "pinned_omitted": stats.pinned_omitted,
            "recalled": stats.recalled,
            "prompt_chars": rendered.prompt_chars,
            "partial": stats.partial,
        },
        memory_ids=sorted({ln.memory_id for ln in rendered.lines}),
        pk_by_uid={uid: row.pk for uid, row in rows.items()},
    )


class MemoryVanished(Exception):
    """A memory chosen for a turn was forgotten before the turn was stored: compose again."""


def _from_digest(digest: Digest) -> Turn:
    lines = [{"n": ln.n, "text": ln.text, "memory_id": ln.memory_uid} for ln in digest.lines.all()]
    return Turn(
        run_id=digest.run_id,
        actor=digest.actor.ref,
        scopes=list(digest.chain),
        block=digest.block,
        entries=digest.entries,
        lines=lines,
        stats=digest.stats,
        replayed=True,
        memory_ids=sorted({ln["memory_id"] for ln in lines}),
    )


def _store(actor: Actor, turn: Turn, thread_id, query, principal) -> bool:
    """Store the digest, its lines and its access-log row in one statement (see
    STORE_TURN); False when this (actor, run_id) already has a digest, in which
    case nothing was written. MemoryVanished when a shown memory was forgotten meanwhile."""
    lines = turn.lines
    now = timezone.now()
    held, digest = prepared.fetch_one(
        STORE_TURN,
        {
            "shown": sorted(turn.pk_by_uid),
            "uid": digest_id(),
            "actor_id": actor.pk,
            "run_id": turn.run_id,
            "thread_ref": thread_id,
            "query": query,
            "chain": turn.scopes,
            "block": turn.block,
            "entries": _jsonb(turn.entries),
            "stats": _jsonb(turn.stats),
            "pinned_omitted": turn.stats["pinned_omitted"],
            "now": now,
            "n": [ln["n"] for ln in lines],
            "text": [ln["text"] for ln in lines],
            "memory_id": [turn.pk_by_uid.get(ln["memory_id"]) for ln in lines],
            "memory_uid": [ln["memory_id"] for ln in lines],
            "channel": principal.channel,
            "principal": principal.name,
            "actor_ref": actor.ref,
            "memory_ids": turn.memory_ids,
            "count": len(turn.entries),
            "detail": _jsonb(_read_detail(turn)),
            "request_id": access_log.REQUEST_ID.get(),
        },
    )
    if held != len(turn.pk_by_uid):
        raise MemoryVanished
    return digest is not None


def stored_digest(actor: Actor, run_id: str) -> Digest | None:
    return (
        Digest.objects.select_related("actor")
        .prefetch_related("lines")
        .filter(actor=actor, run_id=run_id)
        .first()
    )


def resolve_turn(
    actor: Actor,
    run_id: str,
    *,
    principal,
    thread_id: str | None = None,
    query: str | None = None,
    max_memories: int | None = None,
) -> Turn:
    """The run's digest: composed and stored by the first request for (actor, run_id),
    returned unchanged to every later one.

    The first request's digest, its lines and its access-log row are one statement, so
    they commit together (and a forget of a memory they show either waits for them or is
    seen, see STORE_TURN). There is no look-up first: a repeat composes, finds
    the digest already stored (the insert does nothing) and returns the stored one, which
    also settles two concurrent first requests (the second waits on the unique index,
    then returns the first's).
    """
    with access_log.refusals_logged(principal, "turn", actor_ref=actor.ref):
        require(host_id_problem(run_id or "", "run_id"), host_id_problem(thread_id, "thread_id"))
        query = check_query(query)
        budget(max_memories)
        for attempt in range(5):
            try:
                turn = compose(actor, run_id, query, max_memories)
                with erased_as_gone(actor.ref):
                    stored = _store(actor, turn, thread_id, query, principal)
                if stored:
                    return turn
                break
            except MemoryVanished:
                if attempt == 4:
                    raise
    digest = stored_digest(actor, run_id)
    if digest is None:  # the insert found one a moment ago, and digests are never deleted
        raise RuntimeError(f"digest for run {run_id!r} conflicted but cannot be read")
    turn = _from_digest(digest)
    _log_read(principal, "turn", actor, turn)
    return turn


def preview_turn(actor: Actor, *, principal, query: str | None = None) -> Turn:
    """Exactly what resolve_turn would compose now, without storing a digest."""
    query = check_query(query)
    try:
        turn = compose(actor, "preview", query, None)
    except MemoryVanished:  # a shown memory was forgotten mid-read: read again
        turn = compose(actor, "preview", query, None)
    _log_read(principal, "preview", actor, turn)
    return turn


def _read_detail(turn: Turn) -> dict:
    return {"replayed": turn.replayed, "prompt_chars": turn.stats.get("prompt_chars", 0)}


def _log_read(principal, action: str, actor: Actor, turn: Turn) -> None:
    access_log.record(
        principal,
        action,
        200,
        actor_ref=actor.ref,
        memory_ids=turn.memory_ids,
        count=len(turn.entries),
        detail=_read_detail(turn),
    )
