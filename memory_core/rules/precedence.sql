-- Precedence (precedence.py) as the database answers it, for many chains at once: what the
-- triggers keep in memory_core_chainconflict (models/maintained.sql) and what the
-- conflicts page resolves again at read time (memory_core/conflicts.py). Loaded by
-- migrations through memory_core/db/sql_files.py (ReloadSQL); only CREATE OR REPLACE here.
-- tests/test_rule_copies.py and tests/test_maintained_summaries.py hold it to
-- precedence.resolve over generated organisations.
--
-- The rule, restated: among the values held in a chain (memory_core_chains, chain.sql),
-- the one at the narrowest rank wins its key and beats every wider one. One held value per
-- (scope, key) (memory_one_live_per_scope_key), so the rank alone decides; author plays no
-- part.

CREATE OR REPLACE FUNCTION memory_core_chain_conflicts(a_ids bigint[], a_keys text[], at timestamptz)
RETURNS TABLE (actor_id bigint, key varchar, narrow_id bigint, wide_id bigint,
               narrow_scope_id bigint, wide_scope_id bigint, narrow_rank integer,
               wide_rank integer, authors varchar, duplicate boolean)
LANGUAGE sql STABLE AS $$
    -- The (winner, beaten) pairs in the chains of the actors a_ids: of key a_keys[i] in
    -- a_ids[i]'s chain, or of every key when a_keys is NULL. Held values (not retired),
    -- and with `at` only those not expired at that moment (live).
    WITH wanted AS MATERIALIZED (
        SELECT DISTINCT w.actor_id, w.key
        FROM unnest(a_ids, coalesce(a_keys, array_fill(NULL::text, ARRAY[cardinality(a_ids)])))
            AS w(actor_id, key)
    ),
    chain AS MATERIALIZED (SELECT * FROM memory_core_chains(a_ids)),
    placed AS MATERIALIZED (
        -- Given keys: one probe of memory_one_live_per_scope_key per chain scope and key.
        SELECT w.actor_id, c.rank, m.id, m.key, m.author, m.scope_id, m.text
        FROM wanted w
        JOIN chain c ON c.actor_id = w.actor_id
        JOIN memory_core_memory m ON m.scope_id = c.scope_id AND m.key = w.key
        WHERE a_keys IS NOT NULL AND m.retired_at IS NULL
          AND (at IS NULL OR m.expires_at IS NULL OR m.expires_at > at)
        UNION ALL
        -- Every key: every held value of every chain scope.
        SELECT c.actor_id, c.rank, m.id, m.key, m.author, m.scope_id, m.text
        FROM chain c
        JOIN memory_core_memory m ON m.scope_id = c.scope_id
        WHERE a_keys IS NULL AND m.retired_at IS NULL
          AND (at IS NULL OR m.expires_at IS NULL OR m.expires_at > at)
    ),
    winners AS (
        -- The rule: per chain and key, the narrowest rank wins.
        SELECT DISTINCT ON (p.actor_id, p.key) p.*
        FROM placed p ORDER BY p.actor_id, p.key, p.rank
    )
    SELECT w.actor_id, w.key, w.id, p.id, w.scope_id, p.scope_id, w.rank, p.rank,
           (w.author || '>' || p.author)::varchar, w.text = p.text
    FROM winners w
    JOIN placed p ON p.actor_id = w.actor_id AND p.key = w.key AND p.rank > w.rank
$$;
