"""The SQL of the per-turn path, run as prepared statements with binary results.

Every agent turn runs these few statements, so they skip what the ORM costs per call:
compiling the query (a third of a millisecond each), client-side parameter binding, and
the text-format timestamp parser Django installs (a regular expression per value, which
for a chain of ~500 rows cost more than the query). They still go through Django's
connection, its transaction and its cursor wrapper, so `atomic()`, error translation
(IntegrityError, OperationalError → 503) and query capture in tests behave as for any
other query. The statements name their columns; tests/test_hotpath.py holds each read to
the ORM query it replaces, and the turn's write is tested through the API and the
forget race (tests/test_api_turns.py, tests/test_turns.py).
"""

from contextlib import contextmanager

from django.db import connection
from django.db.backends.postgresql.base import ServerBindingCursor


class _PreparedBinaryCursor(ServerBindingCursor):
    """Server-side binding; each statement prepared on first use (per connection), rows
    returned in binary (timestamps decoded in C). Django turns psycopg's prepared
    statements off; settings.py turns them back on (only cursors like this one ever
    prepare) and has PostgreSQL plan them once, generically."""

    def execute(self, query, params=None, **kwargs):
        return super().execute(query, params, prepare=True, binary=True)

    def _send_query_prepared(self, name, pgq, *, binary=None):
        super()._send_query_prepared(name, pgq, binary=binary)
        # psycopg records the query it sent only for unprepared statements, and Django's
        # query log (DEBUG, captured queries in tests) reads it from there.
        self._query = pgq


@contextmanager
def cursor():
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    connection.validate_thread_sharing()
    raw = _PreparedBinaryCursor(connection.connection)
    wrapped = (
        connection.make_debug_cursor(raw)
        if connection.queries_logged
        else connection.make_cursor(raw)
    )
    try:
        yield wrapped
    finally:
        raw.close()


def columns(model, alias: str) -> str:
    """Every concrete column of `model`, in field order, qualified by `alias`."""
    return ", ".join(f"{alias}.{f.column}" for f in model._meta.concrete_fields)


def width(model) -> int:
    return len(model._meta.concrete_fields)


def instance(model, values):
    """A model instance from a row of columns(model, …), as the ORM would load it (only
    for models whose fields need no conversion from the database value)."""
    return model.from_db(connection.alias, None, values)


def fetch_all(sql: str, params) -> list[tuple]:
    with cursor() as cur:
        cur.execute(sql, params)
        return cur.fetchall()


def fetch_one(sql: str, params) -> tuple | None:
    with cursor() as cur:
        cur.execute(sql, params)
        return cur.fetchone()


def execute(sql: str, params) -> None:
    with cursor() as cur:
        cur.execute(sql, params)


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
             count, detail)
        SELECT %(now)s, %(channel)s, %(principal)s, %(actor_ref)s, 'turn', 200, NULL,
               %(memory_ids)b::varchar[], %(count)s, %(detail)s
        FROM digest
    )
    SELECT (SELECT count(*) FROM held), (SELECT id FROM digest)
"""

INSERT_ACCESS = """
    INSERT INTO memory_core_accesslog
        (created_at, channel, principal, actor_ref, action, outcome, scope, memory_ids,
         count, detail)
    VALUES (%s, %s, %s, %s, %s, %s, %s, %b::varchar[], %s, %s)
"""
