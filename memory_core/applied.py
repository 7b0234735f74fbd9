"""What applies to an actor: its chain's live rows, resolved by precedence into entries,
and the API shape of those entries.

Shared by turns (turns.py), the read-back (readback.py), search (search.py) and the
console's actor page; every read of "what does this chain say" goes through here.
"""

from django.utils import timezone

from memory_core import prepared
from memory_core.facts import Entry, Record
from memory_core.models import Memory
from memory_core.precedence import resolve
from memory_core.shapes import ShapeRow, shape, to_record

# The chain's live, unexpired rows (Memory.objects.live().in_chain(chain)), as the fields
# of a facts.Record. memory_one_live_per_scope_key, the partial unique index on
# (scope_id, key) WHERE retired_at IS NULL, serves it: one index scan per chain scope.
# search.py reads the same rows (with their tsvector) from the same two fragments.
RECORD_COLUMNS = "m.uid, s.token, m.key, m.text, m.author, m.pinned, m.created_at, m.expires_at"
LIVE_IN_CHAIN = """
    FROM memory_core_scope s
    JOIN memory_core_memory m ON m.scope_id = s.id
    WHERE s.token = ANY(%(chain)s)
      AND m.retired_at IS NULL
      AND (m.expires_at IS NULL OR m.expires_at > now())
"""
CHAIN_RECORDS = f"SELECT {RECORD_COLUMNS} {LIVE_IN_CHAIN}"

# What the API shows of each memory (shapes.ShapeRow), by public id; the last column says
# whether the conversation it was learned in is still stored (origin.resolves).
SHAPE_ROWS = """
    SELECT m.id, m.uid, m.key, m.text, s.token, m.pinned, m.tags, m.author, m.origin_user,
           oa.ref, m.origin_thread, m.origin_run, m.origin_tool_call, m.created_at, sup.uid,
           EXISTS (
               SELECT 1 FROM memory_core_thread t
               WHERE t.actor_id = m.origin_actor_id AND t.ref = m.origin_thread
           )
    FROM memory_core_memory m
    JOIN memory_core_scope s ON s.id = m.scope_id
    LEFT JOIN memory_core_actor oa ON oa.id = m.origin_actor_id
    LEFT JOIN memory_core_memory sup ON sup.id = m.supersedes_id
    WHERE m.uid = ANY(%s)
"""


def chain_records(chain) -> list[Record]:
    """The chain's live, unexpired rows: the only rows any resolution may look at.

    Plain Records, not model instances: building a Django object (with its scope, actor
    and stored tsvector) for each of a chain's several hundred rows cost far more than
    the query itself. Only the few rows a turn shows are read again, as ShapeRows.
    """
    rows = prepared.fetch_all(CHAIN_RECORDS, {"chain": list(chain)})
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
    rows = prepared.fetch_all(SHAPE_ROWS, [sorted(uids)])
    return {row[1]: ShapeRow(*row) for row in rows}


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
