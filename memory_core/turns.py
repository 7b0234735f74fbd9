"""What an actor's agent is given at the start of a turn, and the read paths beside it.

resolve_turn stores one digest per (actor, run_id): a repeat returns that digest unchanged,
whatever changed since, so a resumed run rebuilds the identical prompt.
"""

from dataclasses import dataclass, field

from django.conf import settings
from django.utils import timezone
from psycopg.types.json import Jsonb

from memory_core import audit, hotpath
from memory_core.actors import chain_of
from memory_core.block import render
from memory_core.errors import Invalid, NotFound
from memory_core.facts import Entry, Record
from memory_core.ids import digest_id
from memory_core.inputs import host_id_problem, require, text_problem
from memory_core.models import Actor, Digest, Memory
from memory_core.precedence import resolve
from memory_core.search import ranked_chain
from memory_core.selection import select
from memory_core.shapes import ShapeRow, memory_shape, shape, to_record

MAX_QUERY_CHARS = 2000


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
    # Database ids of the memories shown, so storing the digest needs no second lookup.
    memory_pks: dict[str, int] = field(default_factory=dict, repr=False)

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


def chain_records(chain) -> list[Record]:
    """The chain's live, unexpired rows: the only rows any resolution may look at.

    Plain Records, not model instances: building a Django object (with its scope, actor
    and stored tsvector) for each of a chain's several hundred rows cost far more than
    the query itself. Only the few rows a turn shows are read again, as ShapeRows.
    """
    rows = hotpath.fetch_all(hotpath.CHAIN_RECORDS, {"chain": list(chain)})
    return [Record(*row) for row in rows]


def chain_entries(chain, records: list[Record] | None = None) -> list[Entry]:
    """Every key that applies to the chain, precedence-resolved, with its overrides."""
    if records is None:
        records = chain_records(chain)
    return resolve(records, chain, now=timezone.now())


def shown_ids(entries) -> set[str]:
    """The memory ids these entries put on screen: each winner and every value it beats."""
    return {e.id for e in entries} | {o.id for e in entries for o in e.overrides}


def shape_rows(uids) -> dict[str, ShapeRow]:
    """What the API shows of these memories, by public id, in one query."""
    rows = hotpath.fetch_all(hotpath.SHAPE_ROWS, [sorted(uids)])
    return {row[1]: ShapeRow(*row) for row in rows}


def chain_memories(chain) -> list[Memory]:
    """The chain's live rows as model objects, for pages that show every one of them."""
    return list(
        Memory.objects.live()
        .in_chain(chain)
        .select_related("scope", "origin_actor", "supersedes")
        .defer("search", "supersedes__search")
        .order_by()
    )


def resolved(chain, memories: list[Memory]) -> list[Entry]:
    return resolve([to_record(m) for m in memories], chain, now=timezone.now())


def entry_shapes(entries, rows: dict[str, ShapeRow] | None = None) -> list[dict]:
    """The API shape of each entry (winner with its overrides)."""
    if rows is None:
        rows = shape_rows(shown_ids(entries))
    # A memory forgotten since the entries were resolved is simply not shown.
    return [
        shape(rows[e.id], [rows[o.id] for o in e.overrides if o.id in rows])
        for e in entries
        if e.id in rows
    ]


def check_query(query: str | None) -> str | None:
    require(text_problem(query, "query", MAX_QUERY_CHARS))
    if query is None or not query.strip():
        return None
    return query.strip()


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
    relevant = None
    if query:
        records, relevant, _ = ranked_chain(chain, query, limit)
        entries = chain_entries(chain, records)
    else:
        entries = chain_entries(chain)
    selection = select(entries, chain, limit, relevant)
    wanted = shown_ids(selection.kept)
    rows = shape_rows(wanted) if wanted else {}
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
        memory_pks={uid: row.pk for uid, row in rows.items()},
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
    hotpath.STORE_TURN); False when this (actor, run_id) already has a digest, in which
    case nothing was written. MemoryVanished when a shown memory was forgotten meanwhile."""
    lines = turn.lines
    now = timezone.now()
    held, digest = hotpath.fetch_one(
        hotpath.STORE_TURN,
        {
            "shown": sorted(turn.memory_pks),
            "uid": digest_id(),
            "actor_id": actor.pk,
            "run_id": turn.run_id,
            "thread_ref": thread_id,
            "query": query,
            "chain": turn.scopes,
            "block": turn.block,
            "entries": Jsonb(turn.entries),
            "stats": Jsonb(turn.stats),
            "pinned_omitted": turn.stats["pinned_omitted"],
            "now": now,
            "n": [ln["n"] for ln in lines],
            "text": [ln["text"] for ln in lines],
            "memory_id": [turn.memory_pks.get(ln["memory_id"]) for ln in lines],
            "memory_uid": [ln["memory_id"] for ln in lines],
            "channel": principal.channel,
            "principal": principal.name,
            "actor_ref": actor.ref,
            "memory_ids": turn.memory_ids,
            "count": len(turn.entries),
            "detail": Jsonb(_read_detail(turn)),
        },
    )
    if held != len(turn.memory_pks):
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
    seen, see hotpath.STORE_TURN). There is no look-up first: a repeat composes, finds
    the digest already stored (the insert does nothing) and returns the stored one, which
    also settles two concurrent first requests (the second waits on the unique index,
    then returns the first's).
    """
    with audit.refusals_logged(principal, "turn", actor_ref=actor.ref):
        require(host_id_problem(run_id or "", "run_id"), host_id_problem(thread_id, "thread_id"))
        query = check_query(query)
        budget(max_memories)
        for attempt in range(5):
            try:
                turn = compose(actor, run_id, query, max_memories)
                if _store(actor, turn, thread_id, query, principal):
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
    audit.record(
        principal,
        action,
        200,
        actor_ref=actor.ref,
        memory_ids=turn.memory_ids,
        count=len(turn.entries),
        detail=_read_detail(turn),
    )


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
    audit.record(
        principal,
        "read_back",
        200,
        actor_ref=actor.ref,
        memory_ids=[e.id for e in page],
        count=len(page),
    )
    return items, len(entries)


def search_memories(actor: Actor, query: str, *, principal, limit: int = 10):
    """The best `limit` keys for the query, precedence-resolved, plus every pinned key."""
    with audit.refusals_logged(principal, "search", actor_ref=actor.ref):
        query = check_query(query)
        if query is None:
            raise Invalid("q is required")
        if limit < 1 or limit > 100:
            raise Invalid("limit must be between 1 and 100")
    chain = chain_of(actor)
    records, keys, tier = ranked_chain(chain, query, limit)
    by_key = {e.key: e for e in chain_entries(chain, records)}
    chosen = [by_key[k] for k in keys if k in by_key]
    ranked = set(keys)
    chosen += [e for e in by_key.values() if e.pinned and e.key not in ranked]
    items = entry_shapes(chosen)
    audit.record(
        principal,
        "search",
        200,
        actor_ref=actor.ref,
        memory_ids=[e.id for e in chosen],
        count=len(chosen),
        detail={"tier": tier, "query_chars": len(query)},
    )
    return items, tier


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
