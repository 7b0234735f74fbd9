-- The functions that keep the summaries of maintained.py (memory_core_scopecount,
-- memory_core_chainconflict, memory_core_conflictpair) in the transaction of every write.
-- The triggers that run them are declared in maintained.py; this file is loaded by
-- migrations through memory_core/db/sql_files.py (ReloadSQL), and holds only
-- CREATE OR REPLACE.
--
-- Every trigger is FOR EACH STATEMENT with transition tables, so a statement that changes a
-- thousand memories (a bulk action, an import, the bench seed's COPY) updates the summaries
-- once, set-wise. The trigger functions are SECURITY DEFINER: they run as the owner that
-- migrated, and the server's role holds only SELECT on the tables (db/privileges.py).
--
-- Conflicts are kept per actor and key: a change of a held value of key K at scope S can
-- change the conflicts of K in exactly the chains that hold S (memory_core_chains_holding,
-- rules/chain.sql). Those (actor, key) pairs are deleted and resolved again
-- (memory_core_chain_conflicts, rules/precedence.sql), in one statement each, never per
-- actor in Python. A change of a chain (an actor registered, memberships replaced)
-- resolves that actor's every key again.
--
-- The trigger functions run with plan_cache_mode = force_generic_plan (a function's SET
-- lasts for its call, nested calls included, and is undone after): their statements take
-- arrays as parameters, and PL/pgSQL's plan cache otherwise planned the conflict rebuild
-- (memory_core_chain_conflicts inlined, ~1 ms) afresh on every write. One remember paid it
-- twice (the old version retired, the new one inserted): 2.5 ms of its insert's 3 ms at
-- the bench's 100k. The generic plan probes the indexes per array element, which is also
-- the plan a custom one picks for the few (actor, key) pairs a write touches.

CREATE OR REPLACE FUNCTION memory_core_rebuild_conflicts(a_ids bigint[], a_keys text[])
RETURNS void LANGUAGE plpgsql AS $$
-- The rows of (a_ids[i], a_keys[i]) (or of every key of a_ids when a_keys is NULL) deleted
-- and resolved again; each pair counted down for every row removed and up for every row
-- added. The actors' rows are locked first, in id order, until commit: two writes that
-- touch one actor's chain (a person's publish at a team, its agent's remember) resolve it
-- one after the other, the second seeing the first's committed values. The pair counts are
-- increments, which commute, so writes for different actors never wait for each other.
DECLARE
    g_n bigint[]; g_w bigint[]; g_k text[]; g_ns bigint[]; g_ws bigint[]; g_a text[];
    g_d boolean[]; z_n bigint[]; z_w bigint[]; k_n bigint[]; k_w bigint[];
BEGIN
    IF a_ids IS NULL OR cardinality(a_ids) = 0 THEN
        RETURN;
    END IF;
    PERFORM 1 FROM memory_core_actor WHERE id = ANY(a_ids) ORDER BY id FOR NO KEY UPDATE;
    -- Of given keys, only the pairs that have a conflict to drop or may have one to add: a
    -- conflict kept now, or two held values of the key in the chain (a conflict is a pair of
    -- them). Most writes are an actor's own key that no wider scope of its chain holds
    -- (about 0.2 ms less for a remember at the bench's 1m). Checked after the lock above,
    -- so a concurrent write to the chain has committed and is seen, or waits and sees this.
    IF a_keys IS NOT NULL THEN
        SELECT array_agg(w.actor_id), array_agg(w.key) INTO a_ids, a_keys
        FROM (SELECT DISTINCT * FROM unnest(a_ids, a_keys) AS u(actor_id, key)) w
        WHERE EXISTS (SELECT 1 FROM memory_core_chainconflict x
                      WHERE x.actor_id = w.actor_id AND x.key = w.key)
           OR (SELECT count(*) FROM memory_core_chains(ARRAY[w.actor_id]) c
               JOIN memory_core_memory m ON m.scope_id = c.scope_id AND m.key = w.key
               WHERE m.retired_at IS NULL) > 1;
        IF a_ids IS NULL THEN
            RETURN;
        END IF;
    END IF;
    IF a_keys IS NULL THEN
        WITH gone AS (
            DELETE FROM memory_core_chainconflict x WHERE x.actor_id = ANY(a_ids)
            RETURNING x.*
        )
        SELECT array_agg(narrow_id), array_agg(wide_id), array_agg(key),
               array_agg(narrow_scope_id), array_agg(wide_scope_id), array_agg(authors),
               array_agg(duplicate)
        INTO g_n, g_w, g_k, g_ns, g_ws, g_a, g_d FROM gone;
    ELSE
        WITH gone AS (
            DELETE FROM memory_core_chainconflict x
            USING unnest(a_ids, a_keys) AS w(actor_id, key)
            WHERE x.actor_id = w.actor_id AND x.key = w.key
            RETURNING x.*
        )
        SELECT array_agg(narrow_id), array_agg(wide_id), array_agg(key),
               array_agg(narrow_scope_id), array_agg(wide_scope_id), array_agg(authors),
               array_agg(duplicate)
        INTO g_n, g_w, g_k, g_ns, g_ws, g_a, g_d FROM gone;
    END IF;
    WITH added AS (
        INSERT INTO memory_core_chainconflict
            (actor_id, key, narrow_id, wide_id, narrow_scope_id, wide_scope_id, narrow_rank,
             wide_rank, authors, duplicate)
        SELECT * FROM memory_core_chain_conflicts(a_ids, a_keys, NULL)
        RETURNING narrow_id, wide_id, key, narrow_scope_id, wide_scope_id, authors, duplicate,
                  narrow_rank, wide_rank
    ),
    delta AS (
        SELECT added.*, 1 AS d FROM added
        UNION ALL
        SELECT u.*, 32767, 32767, -1 FROM unnest(g_n, g_w, g_k, g_ns, g_ws, g_a, g_d)
            AS u(narrow_id, wide_id, key, narrow_scope_id, wide_scope_id, authors, duplicate)
    ),
    counted AS (
        INSERT INTO memory_core_conflictpair AS p
            (narrow_id, wide_id, key, narrow_scope_id, wide_scope_id, authors,
             agent_over_human, duplicate, actors, narrow_rank, wide_rank)
        SELECT narrow_id, wide_id, key, narrow_scope_id, wide_scope_id, authors,
               authors = 'agent>human', duplicate, sum(d), min(narrow_rank), min(wide_rank)
        FROM delta
        GROUP BY narrow_id, wide_id, key, narrow_scope_id, wide_scope_id, authors, duplicate
        HAVING sum(d) <> 0 OR min(d) < 0
        ORDER BY narrow_id, wide_id
        ON CONFLICT (narrow_id, wide_id) DO UPDATE SET
            actors = p.actors + EXCLUDED.actors,
            narrow_rank = least(p.narrow_rank, EXCLUDED.narrow_rank),
            wide_rank = least(p.wide_rank, EXCLUDED.wide_rank)
        RETURNING p.narrow_id, p.wide_id, p.actors
    )
    SELECT array_agg(narrow_id) FILTER (WHERE actors <= 0),
           array_agg(wide_id) FILTER (WHERE actors <= 0),
           array_agg(narrow_id) FILTER (WHERE actors > 0),
           array_agg(wide_id) FILTER (WHERE actors > 0)
    INTO z_n, z_w, k_n, k_w
    FROM counted;
    IF z_n IS NOT NULL THEN
        DELETE FROM memory_core_conflictpair p
        USING unnest(z_n, z_w) AS z(narrow_id, wide_id)
        WHERE p.narrow_id = z.narrow_id AND p.wide_id = z.wide_id AND p.actors <= 0;
    END IF;
    -- A pair that lost a row (or gained one) keeps the narrowest ranks of the rows it has.
    IF k_n IS NOT NULL THEN
        UPDATE memory_core_conflictpair p
        SET narrow_rank = r.narrow_rank, wide_rank = r.wide_rank
        FROM (
            SELECT c.narrow_id, c.wide_id, min(c.narrow_rank) AS narrow_rank,
                   min(c.wide_rank) AS wide_rank
            FROM unnest(k_n, k_w) AS k(narrow_id, wide_id)
            JOIN memory_core_chainconflict c
              ON c.narrow_id = k.narrow_id AND c.wide_id = k.wide_id
            GROUP BY c.narrow_id, c.wide_id
        ) r
        WHERE p.narrow_id = r.narrow_id AND p.wide_id = r.wide_id
          AND (p.narrow_rank, p.wide_rank) IS DISTINCT FROM (r.narrow_rank, r.wide_rank);
    END IF;
END;
$$;

CREATE OR REPLACE FUNCTION memory_core_values_changed(scope_ids bigint[], keys text[])
RETURNS void LANGUAGE plpgsql AS $$
-- Held values of keys[i] changed at scope_ids[i]: resolve those keys again in every chain
-- that holds the scope.
DECLARE
    a_ids bigint[];
    a_keys text[];
BEGIN
    IF scope_ids IS NULL OR cardinality(scope_ids) = 0 THEN
        RETURN;
    END IF;
    SELECT array_agg(h.actor_id), array_agg(h.key) INTO a_ids, a_keys
    FROM (
        SELECT DISTINCT x.actor_id, c.key
        FROM (SELECT DISTINCT * FROM unnest(scope_ids, keys) AS u(scope_id, key)) c
        CROSS JOIN LATERAL memory_core_chains_holding(ARRAY[c.scope_id]) x
    ) h;
    PERFORM memory_core_rebuild_conflicts(a_ids, a_keys);
END;
$$;

CREATE OR REPLACE FUNCTION memory_core_memory_inserted() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
SET plan_cache_mode = force_generic_plan AS $$
DECLARE s bigint[]; k text[];
BEGIN
    INSERT INTO memory_core_scopecount AS c (scope_id, held, agent, pinned)
    SELECT n.scope_id, count(*), count(*) FILTER (WHERE n.author = 'agent'),
           count(*) FILTER (WHERE n.pinned)
    FROM new_rows n WHERE n.retired_at IS NULL
    GROUP BY n.scope_id ORDER BY n.scope_id
    ON CONFLICT (scope_id) DO UPDATE SET held = c.held + EXCLUDED.held,
        agent = c.agent + EXCLUDED.agent, pinned = c.pinned + EXCLUDED.pinned;
    SELECT array_agg(n.scope_id), array_agg(n.key) INTO s, k
    FROM new_rows n WHERE n.retired_at IS NULL;
    PERFORM memory_core_values_changed(s, k);
    RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION memory_core_memory_deleted() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
SET plan_cache_mode = force_generic_plan AS $$
DECLARE s bigint[]; k text[];
BEGIN
    INSERT INTO memory_core_scopecount AS c (scope_id, held, agent, pinned)
    SELECT o.scope_id, -count(*), -count(*) FILTER (WHERE o.author = 'agent'),
           -count(*) FILTER (WHERE o.pinned)
    FROM old_rows o WHERE o.retired_at IS NULL
    GROUP BY o.scope_id ORDER BY o.scope_id
    ON CONFLICT (scope_id) DO UPDATE SET held = c.held + EXCLUDED.held,
        agent = c.agent + EXCLUDED.agent, pinned = c.pinned + EXCLUDED.pinned;
    SELECT array_agg(o.scope_id), array_agg(o.key) INTO s, k
    FROM old_rows o WHERE o.retired_at IS NULL;
    PERFORM memory_core_values_changed(s, k);
    RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION memory_core_memory_updated() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
SET plan_cache_mode = force_generic_plan AS $$
-- The fact, its scope and key never change (memory_fields_immutable): only whether a row
-- is held (retired_at) and whether it is pinned matter here.
DECLARE s bigint[]; k text[];
BEGIN
    INSERT INTO memory_core_scopecount AS c (scope_id, held, agent, pinned)
    SELECT d.scope_id, sum(d.held), sum(d.agent), sum(d.pinned)
    FROM (
        SELECT n.scope_id,
               (n.retired_at IS NULL)::int - (o.retired_at IS NULL)::int AS held,
               ((n.retired_at IS NULL)::int - (o.retired_at IS NULL)::int)
                   * (n.author = 'agent')::int AS agent,
               (n.retired_at IS NULL AND n.pinned)::int
                   - (o.retired_at IS NULL AND o.pinned)::int AS pinned
        FROM new_rows n JOIN old_rows o ON o.id = n.id
    ) d
    GROUP BY d.scope_id
    HAVING sum(d.held) <> 0 OR sum(d.pinned) <> 0
    ORDER BY d.scope_id
    ON CONFLICT (scope_id) DO UPDATE SET held = c.held + EXCLUDED.held,
        agent = c.agent + EXCLUDED.agent, pinned = c.pinned + EXCLUDED.pinned;
    -- A version retired by the statement that also inserted its successor (a remember that
    -- replaces a value, writes.sql) leaves its key to the insert's trigger, which resolves
    -- it again with both changes seen: one conflict rebuild, not two. Only that statement
    -- can have made another row live at the key meanwhile (one live row per scope and key:
    -- any other writer of the key waits for this transaction), and a row this update made
    -- live again is among its own keys.
    SELECT array_agg(n.scope_id), array_agg(n.key) INTO s, k
    FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE (n.retired_at IS NULL) <> (o.retired_at IS NULL)
      AND NOT (n.retired_at IS NOT NULL AND EXISTS (
          SELECT 1 FROM memory_core_memory m
          WHERE m.scope_id = n.scope_id AND m.key = n.key AND m.retired_at IS NULL
            AND NOT EXISTS (SELECT 1 FROM new_rows r WHERE r.id = m.id)));
    PERFORM memory_core_values_changed(s, k);
    RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION memory_core_chains_changed() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
SET plan_cache_mode = force_generic_plan AS $$
-- An actor registered or its memberships changed: every key of its chain, again.
DECLARE a_ids bigint[];
BEGIN
    IF TG_TABLE_NAME = 'memory_core_actor' THEN
        IF TG_OP = 'INSERT' THEN
            SELECT array_agg(n.id) INTO a_ids FROM new_rows n;
        ELSE
            SELECT array_agg(n.id) INTO a_ids
            FROM new_rows n JOIN old_rows o ON o.id = n.id WHERE n.scope_id <> o.scope_id;
        END IF;
    ELSIF TG_OP = 'INSERT' THEN
        SELECT array_agg(DISTINCT n.actor_id) INTO a_ids FROM new_rows n;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(DISTINCT o.actor_id) INTO a_ids FROM old_rows o;
    ELSE
        SELECT array_agg(DISTINCT x.actor_id) INTO a_ids
        FROM (SELECT actor_id FROM new_rows UNION SELECT actor_id FROM old_rows) x;
    END IF;
    PERFORM memory_core_rebuild_conflicts(a_ids, NULL);
    RETURN NULL;
END;
$$;
