-- An agent's remember (writes.py) as one call from the server: the whole change, as
-- changes.audited would make it, in the statement's own transaction. Loaded by migrations
-- through memory_core/db/sql_files.py (ReloadSQL); this file holds only CREATE OR REPLACE.
--
-- Sent as a dozen statements from Python, a remember waited for a dozen round trips (BEGIN,
-- two locks, the live row, the retire, the insert, the vector, `similar`, the ledger event,
-- the access-log row, COMMIT), about 0.4 ms each on the bench's machine: more than the
-- statements themselves cost. Here each step is still a statement of its own, so (in READ
-- COMMITTED) each takes its snapshot after the locks before it are held, as in Python.
--
-- What stays in Python: the checks (key, fact, ids, who may write), the vector (computed
-- before any lock is taken), the refusal's access-log row, and turning the result into a
-- Memory. Publish, correct and promote still go through writes.supersede.
--
-- The steps, in writes.remember's order:
--   1. the (scope, key) slot's lock (slot_lock: locks.lock_id("memory", scope, key), the id
--      every writer of the slot takes), then its live row, locked;
--   2. a write this (actor, run_id, tool_call_id) already made comes back as it is stored
--      (created false); capture's same_fact_unchanged returns the live row when it already
--      says this fact;
--   3. otherwise the live row is retired (superseded) and its successor inserted in ONE
--      statement, so that the summaries' update trigger leaves the key to the insert's
--      (maintained.sql: one conflict rebuild instead of two); then the version's vector
--      (NULL, pending, when the embedder failed);
--   4. `similar`: the actor's live memories under other keys holding (nearly) the same fact
--      (writes.py, "Near-duplicates");
--   5. the ledger event (memory.remembered, created only) and the access-log row, with the
--      change's tags (bulk, proposal, extraction) merged into the payload and the detail.
-- a_embedder and a_dims are the configured embedder's (NULL for none): the vector's row
-- names them when a_vector is given, and `similar` compares vectors of that embedder.
-- Result: the version's id, whether it was created, its pinned/tags/lineage (carried from
-- the row it supersedes), what it supersedes, and `similar` as two arrays.

CREATE OR REPLACE FUNCTION memory_core_remember(
    slot_lock bigint, stream_lock bigint,
    a_scope bigint, a_key varchar, a_text text, a_uid varchar, a_lineage uuid,
    a_actor bigint, a_thread varchar, a_run varchar, a_tool_call varchar,
    a_principal varchar, a_at timestamptz, same_fact_unchanged boolean,
    a_embedder varchar, a_dims smallint, a_vector vector,
    same_vector double precision, same_near double precision, same_trigram double precision,
    similar_limit integer,
    a_stream varchar, a_scope_token varchar, a_actor_ref varchar, a_tags jsonb,
    a_channel varchar, a_request_id varchar, genesis varchar
) RETURNS TABLE (r_id bigint, r_created boolean, r_pinned boolean, r_tags varchar[],
                 r_lineage uuid, r_supersedes_id bigint, r_supersedes_uid varchar,
                 r_similar_uids varchar[], r_similar_keys varchar[])
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    live_id bigint; live_uid varchar; live_text text;
    m_scope bigint; m_key varchar; m_text text; m_uid varchar;
    unchanged boolean := false;
    scope_token varchar := a_scope_token;
    detail jsonb;
BEGIN
    r_created := false;
    r_similar_uids := '{}';
    r_similar_keys := '{}';

    -- 1. The slot.
    PERFORM pg_advisory_xact_lock(slot_lock);
    SELECT m.id, m.uid, m.text, m.pinned, m.tags, m.lineage
    INTO live_id, live_uid, live_text, r_pinned, r_tags, r_lineage
    FROM memory_core_memory m
    WHERE m.scope_id = a_scope AND m.key = a_key AND m.retired_at IS NULL
    ORDER BY m.id
    LIMIT 1
    FOR UPDATE OF m;

    -- 2. A repeat, or nothing to change.
    IF a_run IS NOT NULL AND a_tool_call IS NOT NULL THEN
        SELECT m.id, m.scope_id, m.key, m.text, m.uid INTO r_id, m_scope, m_key, m_text, m_uid
        FROM memory_core_memory m
        WHERE m.origin_actor_id = a_actor AND m.origin_run = a_run
          AND m.origin_tool_call = a_tool_call
        ORDER BY m.id
        LIMIT 1;
    END IF;
    IF r_id IS NULL AND same_fact_unchanged AND live_text = a_text THEN
        unchanged := true;
        r_id := live_id;
        m_scope := a_scope; m_key := a_key; m_text := live_text; m_uid := live_uid;
    ELSIF r_id IS NULL THEN
        -- 3. The new version (and the retire of the one it replaces), then its vector.
        IF live_id IS NULL THEN
            r_pinned := false;
            r_tags := '{}';
            r_lineage := a_lineage;
            INSERT INTO memory_core_memory
                (uid, scope_id, key, text, pinned, tags, author, origin_actor_id,
                 origin_thread, origin_run, origin_tool_call, origin_user, lineage,
                 created_at, expires_at, retired_at, retired_reason, retired_note,
                 retired_by, supersedes_id, promoted_from_id)
            VALUES (a_uid, a_scope, a_key, a_text, false, '{}', 'agent', a_actor,
                    a_thread, a_run, a_tool_call, NULL, a_lineage,
                    a_at, NULL, NULL, '', '', '', NULL, NULL)
            RETURNING id INTO r_id;
        ELSE
            WITH retired AS (
                UPDATE memory_core_memory
                SET retired_at = a_at, retired_reason = 'superseded', retired_by = a_principal,
                    retired_note = ''
                WHERE id = live_id AND retired_at IS NULL
                RETURNING id, pinned, tags, lineage
            )
            INSERT INTO memory_core_memory
                (uid, scope_id, key, text, pinned, tags, author, origin_actor_id,
                 origin_thread, origin_run, origin_tool_call, origin_user, lineage,
                 created_at, expires_at, retired_at, retired_reason, retired_note,
                 retired_by, supersedes_id, promoted_from_id)
            SELECT a_uid, a_scope, a_key, a_text, r.pinned, r.tags, 'agent', a_actor,
                   a_thread, a_run, a_tool_call, NULL, r.lineage,
                   a_at, NULL, NULL, '', '', '', r.id, NULL
            FROM retired r
            RETURNING id INTO r_id;
            IF r_id IS NULL THEN  -- as writes.retire says of a row that is not live
                RAISE EXCEPTION 'memory % is not live: nothing was retired', live_uid;
            END IF;
            r_supersedes_id := live_id;
            r_supersedes_uid := live_uid;
        END IF;
        INSERT INTO memory_core_embedding (memory_id, embedder, dims, vector, embedded_at)
        VALUES (r_id, CASE WHEN a_vector IS NOT NULL THEN a_embedder END,
                CASE WHEN a_vector IS NOT NULL THEN a_dims END, a_vector,
                CASE WHEN a_vector IS NOT NULL THEN a_at END);
        r_created := true;
        m_scope := a_scope; m_key := a_key; m_text := a_text; m_uid := a_uid;
    END IF;
    IF m_scope <> a_scope THEN
        SELECT s.token INTO scope_token FROM memory_core_scope s WHERE s.id = m_scope;
    END IF;

    -- 4. Near-duplicates: over the memory's own scope only (its live rows by the scope's
    -- index); its vector read back by its id, the candidates' in one scan.
    IF NOT unchanged THEN
        WITH written AS MATERIALIZED (
            SELECT e.vector FROM memory_core_embedding e
            WHERE e.memory_id = r_id AND e.embedder = a_embedder AND e.dims = a_dims
        ), candidates AS MATERIALIZED (
            -- From memory_one_live_per_scope_key alone (it includes expires_at and id).
            SELECT m.id, m.key
            FROM memory_core_memory m
            WHERE m.scope_id = m_scope AND m.retired_at IS NULL AND m.key <> m_key
              AND (m.expires_at IS NULL OR m.expires_at > now())
        ), meant AS MATERIALIZED (
            -- The candidates' vectors in one index scan over the array of their ids, each
            -- distance taken in that scan (as search.py's ranked statements do).
            SELECT e.memory_id, 1 - (e.vector <=> (SELECT vector FROM written)) AS meaning
            FROM memory_core_embedding e
            WHERE e.memory_id = ANY(ARRAY(SELECT id FROM candidates))
              AND e.embedder = a_embedder AND e.dims = a_dims
            OFFSET 0
        ), worded AS MATERIALIZED (
            -- A candidate's text is read only when its words are compared.
            SELECT c.id, c.key, t.meaning,
                   CASE WHEN t.meaning IS NULL OR t.meaning >= same_near AND t.meaning < same_vector
                        THEN (SELECT similarity(m.text, m_text) FROM memory_core_memory m
                              WHERE m.id = c.id) END AS words
            FROM candidates c LEFT JOIN meant t ON t.memory_id = c.id
        ), chosen AS (
            SELECT id, key, greatest(meaning, words) AS closeness FROM worded
            WHERE meaning >= same_vector OR words >= same_trigram
            ORDER BY greatest(meaning, words) DESC, key
            LIMIT similar_limit
        )
        SELECT coalesce(array_agg(m.uid ORDER BY c.closeness DESC, c.key), '{}'),
               coalesce(array_agg(c.key ORDER BY c.closeness DESC, c.key), '{}')
        INTO r_similar_uids, r_similar_keys
        FROM chosen c JOIN memory_core_memory m ON m.id = c.id;
    END IF;

    -- 5. What the change leaves on record.
    IF r_created THEN
        PERFORM memory_core_ledger_append(
            stream_lock, a_stream, 'memory.remembered', a_scope_token, a_principal,
            a_actor_ref,
            jsonb_build_object('memory', a_uid, 'supersedes', live_uid,
                               'chars', char_length(a_text)) || a_tags,
            a_at, genesis);
    END IF;
    detail := jsonb_build_object('chars', char_length(m_text), 'created', r_created);
    IF cardinality(r_similar_uids) > 0 THEN
        detail := detail || jsonb_build_object('similar', to_jsonb(r_similar_uids));
    END IF;
    INSERT INTO memory_core_accesslog
        (created_at, channel, principal, actor_ref, action, outcome, scope, memory_ids,
         count, detail, request_id)
    VALUES (a_at, a_channel, a_principal, a_actor_ref, 'remember',
            CASE WHEN r_created THEN 201 ELSE 200 END, scope_token, ARRAY[m_uid], 1,
            detail || a_tags, a_request_id);
    RETURN NEXT;
END;
$$;
