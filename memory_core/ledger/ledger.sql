-- Appending to a stream's hash chain (ledger.py): the stream's advisory lock, then its tail
-- read and the next event written, in one call from the server. Loaded by migrations
-- through memory_core/db/sql_files.py (ReloadSQL); this file holds only CREATE OR REPLACE.
--
-- A PL/pgSQL function, not one statement: the INSERT is a statement of its own, so (in READ
-- COMMITTED) it takes its snapshot after the lock is held and sees whatever the previous
-- holder committed. As two statements sent from Python it cost a round trip more on every
-- change. The caller passes the lock's id (memory_core.db.locks.lock_id("ledger", stream)),
-- the same one every other appender of the stream takes. PostgreSQL computes the hash over
-- the values it stores (memory_core_ledger_hash, migration 0005).

CREATE OR REPLACE FUNCTION memory_core_ledger_append(
    stream_lock bigint, a_stream varchar, a_kind varchar, a_scope varchar,
    a_principal varchar, a_actor_ref varchar, a_payload jsonb, a_created_at timestamptz,
    genesis varchar
) RETURNS TABLE (event_id bigint, event_seq bigint, event_prev_hash varchar,
                 event_hash varchar)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(stream_lock);
    RETURN QUERY
    INSERT INTO memory_core_ledgerevent AS x
        (stream, seq, kind, scope, principal, actor_ref, payload, created_at, prev_hash, hash)
    SELECT a_stream, e.seq, a_kind, a_scope, a_principal, a_actor_ref, a_payload,
           a_created_at, e.prev_hash,
           memory_core_ledger_hash(a_stream, e.seq, a_kind, a_scope, a_principal,
                                   a_actor_ref, a_payload, a_created_at, e.prev_hash)
    FROM (
        SELECT coalesce(tail.seq, 0) + 1 AS seq, coalesce(tail.hash, genesis) AS prev_hash
        FROM (SELECT 1) AS one
        LEFT JOIN LATERAL (
            SELECT l.seq, l.hash FROM memory_core_ledgerevent l
            WHERE l.stream = a_stream ORDER BY l.seq DESC LIMIT 1
        ) AS tail ON true
    ) AS e
    RETURNING x.id, x.seq, x.prev_hash, x.hash;
END;
$$;
