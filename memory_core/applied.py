"""What applies to an actor: its chain's live rows, resolved by precedence into entries,
a turn's selection of them made in SQL (chain_selection), and the API shape of entries.

Shared by turns (turns.py), the read-back (readback.py), search (search.py) and the
console's actor page; every read of "what does this chain say" goes through here.
"""

from django.utils import timezone

from memory_core.db import prepared
from memory_core.models import Memory
from memory_core.rules.facts import Entry, Record, Selection, SelectionStats
from memory_core.rules.precedence import resolve
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


# A turn without a query, selected where the rows are (POST /turns' common case): the chain
# holds ~540 live rows at the benchmark's 1m and a turn shows 25 keys, so reading every row
# into Python to resolve and select there cost more than the rest of the turn. This is
# precedence.resolve and selection.select (with no relevant keys) restated;
# tests/test_rule_copies.py holds it to them over generated organisations. It is the one SQL
# copy of precedence outside rules/precedence.sql, on purpose: the turn's chain is the one
# chain_of resolved in Python for the request (the chain visibility was checked against),
# not the tables' view of it, and its rows come from an index-only scan that reads no text,
# where the function places text and author for every row of many chains.
#
# Per key, the winner is the narrowest (the chain's order), then newest, then lowest id;
# `pinned` is any row of the key pinned. Keys are then taken pinned first, each group
# narrowest, newest, then by key, up to the budget. Strings compare as bytes (COLLATE "C"),
# as Python compares them. Returned: every row of each kept key (the winner and what it
# beats, for precedence.resolve to lay out), with the counts of keys offered and pinned. No
# sort but the top-N of the kept keys: at 1m the statement takes ~1 ms of PostgreSQL time
# where the Python it replaces took 1.5 ms of the worker's.
#
# `live` reads only columns memory_one_live_per_scope_key carries (an index-only scan); the
# text and the rest are read from the heap for the kept keys' rows alone.
# With a query (search.py), the same statement ranks the chain's keys first (`ranked`:
# key, place) and takes them after the pinned keys and before the rest, as select() does
# with relevant keys; it then reads the columns the ranking needs from the heap as well.
LIVE_COLUMNS = "s.token, m.key, m.pinned, m.created_at, m.expires_at, c.rank, m.id"
LIVE_WITH_CHAIN_RANK = """
        FROM unnest(%(chain)s::text[]) WITH ORDINALITY AS c(token, rank)
        JOIN memory_core_scope s ON s.token = c.token
        JOIN memory_core_memory m ON m.scope_id = s.id
        WHERE m.retired_at IS NULL
          AND (m.expires_at IS NULL OR m.expires_at > now())
"""
# A key's narrowest row is its winner: one live row per (scope, key), so one per rank
# (memory_one_live_per_scope_key).
KEYED = "SELECT key, min(rank) AS rank, bool_or(pinned) AS pinned FROM live GROUP BY key"
COUNTS = "SELECT count(*) AS offered, count(*) FILTER (WHERE pinned) AS pinned_keys FROM keyed"
# The counts come back even when nothing is kept (a row of nulls beside them); each kept
# row with what the API shows of it (as SHAPE_ROWS reads it), then `extra` columns.
KEPT_ROWS = """
    SELECT m.uid, l.token, l.key, m.text, m.author, l.pinned, l.created_at, l.expires_at,
           counts.offered, counts.pinned_keys,
           m.id, m.tags, m.origin_user, oa.ref, m.origin_thread, m.origin_run,
           m.origin_tool_call, sup.uid,
           EXISTS (
               SELECT 1 FROM memory_core_thread t
               WHERE t.actor_id = m.origin_actor_id AND t.ref = m.origin_thread
           ){extra}
    FROM counts
    LEFT JOIN (
        kept
        JOIN live l ON l.key = kept.key
        JOIN memory_core_memory m ON m.id = l.id
        LEFT JOIN memory_core_actor oa ON oa.id = m.origin_actor_id
        LEFT JOIN memory_core_memory sup ON sup.id = m.supersedes_id
    ) ON true
"""
SELECTED_IN_CHAIN = f"""
    WITH live AS MATERIALIZED (
        SELECT {LIVE_COLUMNS} {LIVE_WITH_CHAIN_RANK}
    ), keyed AS MATERIALIZED ({KEYED}
    ), kept AS (
        SELECT k.key
        FROM keyed k JOIN live w ON w.key = k.key AND w.rank = k.rank
        ORDER BY k.pinned DESC, k.rank, w.created_at DESC, k.key COLLATE "C"
        LIMIT %(room)s
    ), counts AS ({COUNTS}
    )
    {KEPT_ROWS.format(extra="")}
"""


def chain_selection(chain, max_lines: int) -> tuple[Selection, dict[str, ShapeRow]]:
    """What selection.select(chain_entries(chain), chain, max_lines) keeps, and its stats,
    chosen in the database: only the kept keys' rows come back, with what the API shows
    of each (shape_rows of the entries' shown_ids), from the same statement."""
    room = max(0, max_lines)
    rows = prepared.fetch_all(SELECTED_IN_CHAIN, {"chain": list(chain), "room": room})
    return selection_of(chain, rows, room)


def selection_of(
    chain, rows, room: int, places: dict[str, int] | None = None
) -> tuple[Selection, dict[str, ShapeRow]]:
    """The Selection and shapes of the rows of SELECTED_IN_CHAIN, or of search.py's ranked
    variant (`places`: each ranked key's place; select()'s relevant keys)."""
    kept_rows = [row for row in rows if row[0] is not None]
    kept = resolve([Record(*row[:8]) for row in kept_rows], chain, now=timezone.now())
    offered, pinned_keys = rows[0][8], rows[0][9]
    omitted = offered - len(kept)
    recalled = sum(1 for e in kept if not e.pinned and e.key in places) if places else 0
    stats = SelectionStats(
        offered=offered,
        omitted=omitted,
        pinned_omitted=max(0, pinned_keys - room),
        recalled=recalled,
        partial=omitted > 0 or recalled > 0,
    )
    shown = shown_ids(kept)
    shapes = {row[0]: shape_row_of(row) for row in kept_rows if row[0] in shown}
    return Selection(kept=tuple(kept), stats=stats), shapes


def shape_row_of(row) -> ShapeRow:
    """A ShapeRow from a row of SELECTED_IN_CHAIN (its record, counts, then shape columns,
    then any columns a variant adds)."""
    uid, token, key, text, author, pinned, created_at, _expires, _offered, _pinned = row[:10]
    pk, tags, origin_user, origin_actor, thread, run, tool_call, supersedes, stored = row[10:19]
    return ShapeRow(
        pk,
        uid,
        key,
        text,
        token,
        pinned,
        tags,
        author,
        origin_user,
        origin_actor,
        thread,
        run,
        tool_call,
        created_at,
        supersedes,
        stored,
    )


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
