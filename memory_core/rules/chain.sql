-- The chain (chain.py) as the database answers it, for many actors at once. Loaded by
-- migrations through memory_core/db/sql_files.py (ReloadSQL); only CREATE OR REPLACE here.
-- tests/test_rule_copies.py holds both functions to actors.chain_of over generated
-- organisations.
--
-- An actor's chain as ranks: its own scope 0, its memberships in their order (rank + 1),
-- `global` last at 32767 (above any membership's rank, a smallint): resolve_chain's order.
-- Both functions are plain SQL, STABLE and not STRICT, so PostgreSQL inlines them into the
-- statement that calls them and plans the whole (unless an argument is a sub-select: call
-- them LATERAL, one scope or actor at a time, to keep the inlining).

CREATE OR REPLACE FUNCTION memory_core_chains(actor_ids bigint[])
RETURNS TABLE (actor_id bigint, scope_id bigint, rank integer)
LANGUAGE sql STABLE AS $$
    -- Every scope of the chains of actor_ids, each actor once however often it is named.
    WITH ids AS MATERIALIZED (SELECT DISTINCT u.id FROM unnest(actor_ids) AS u(id))
    SELECT a.id, a.scope_id, 0
    FROM ids JOIN memory_core_actor a ON a.id = ids.id
    UNION ALL
    SELECT m.actor_id, m.scope_id, m.rank + 1
    FROM ids JOIN memory_core_membership m ON m.actor_id = ids.id
    UNION ALL
    SELECT ids.id, g.id, 32767
    FROM ids CROSS JOIN memory_core_scope g WHERE g.token = 'global'
$$;

CREATE OR REPLACE FUNCTION memory_core_chains_holding(scope_ids bigint[])
RETURNS TABLE (scope_id bigint, actor_id bigint)
LANGUAGE sql STABLE AS $$
    -- The chain read backwards: the actors whose chain holds each of scope_ids (the actor
    -- whose own scope it is, its members, and every actor for `global`). A scope named
    -- twice answers twice; callers keep what they need DISTINCT.
    SELECT s.id, x.actor_id
    FROM unnest(scope_ids) AS s(id)
    CROSS JOIN LATERAL (
        SELECT a.id AS actor_id FROM memory_core_actor a WHERE a.scope_id = s.id
        UNION ALL
        SELECT m.actor_id FROM memory_core_membership m WHERE m.scope_id = s.id
        UNION ALL
        SELECT a.id FROM memory_core_actor a
        WHERE EXISTS (
            SELECT 1 FROM memory_core_scope g WHERE g.id = s.id AND g.token = 'global'
        )
    ) x
$$;
