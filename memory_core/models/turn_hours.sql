-- The functions that keep the turns per hour of maintained.py (memory_core_tenantturnhour,
-- memory_core_actorturnhour) in the transaction of every statement that writes stored turns
-- (memory_core_digest). The triggers that run them are declared in maintained.py; this file
-- is loaded by migrations through memory_core/db/sql_files.py (ReloadSQL), and holds only
-- CREATE OR REPLACE.
--
-- An hour is date_trunc('hour', created_at, 'UTC'), whatever the writer's session time zone.
-- A turn is one statement (turns.STORE_TURN), so the row of its hour is locked from that
-- statement to its commit only; turns of one tenant in one hour wait for each other that
-- long, turns of different tenants never. Rows are locked actor rows first, then tenant
-- rows, each in key order, so two statements never wait for each other in a cycle.

CREATE OR REPLACE FUNCTION memory_core_count_turns(
    a_ids bigint[], a_hours timestamptz[], a_turns int[], a_alerts int[]
) RETURNS void LANGUAGE plpgsql AS $$
-- Add a_turns[i] and a_alerts[i] (negative: take away) to actor a_ids[i]'s hour
-- a_hours[i] and to its tenant's; a row brought to nothing is removed, so a row is an hour
-- with turns. (Inserts, the common case, upsert directly: memory_core_turns_inserted.)
BEGIN
    IF a_ids IS NULL OR cardinality(a_ids) = 0 THEN
        RETURN;
    END IF;
    INSERT INTO memory_core_actorturnhour AS c (actor_id, hour, turns, alerts)
    SELECT u.actor_id, u.hour, sum(u.turns), sum(u.alerts)
    FROM unnest(a_ids, a_hours, a_turns, a_alerts) AS u(actor_id, hour, turns, alerts)
    GROUP BY u.actor_id, u.hour
    HAVING sum(u.turns) <> 0 OR sum(u.alerts) <> 0
    ORDER BY u.actor_id, u.hour
    ON CONFLICT (actor_id, hour) DO UPDATE SET
        turns = c.turns + EXCLUDED.turns, alerts = c.alerts + EXCLUDED.alerts;

    INSERT INTO memory_core_tenantturnhour AS c (tenant, hour, turns, alerts)
    SELECT coalesce(memory_core_tenant_of('actor:' || a.ref), ''), u.hour, sum(u.turns),
           sum(u.alerts)
    FROM unnest(a_ids, a_hours, a_turns, a_alerts) AS u(actor_id, hour, turns, alerts)
    JOIN memory_core_actor a ON a.id = u.actor_id
    GROUP BY 1, u.hour
    HAVING sum(u.turns) <> 0 OR sum(u.alerts) <> 0
    ORDER BY 1, u.hour
    ON CONFLICT (tenant, hour) DO UPDATE SET
        turns = c.turns + EXCLUDED.turns, alerts = c.alerts + EXCLUDED.alerts;

    -- Only a removal (or a change) takes turns away: the hours it emptied go.
    IF EXISTS (SELECT 1 FROM unnest(a_turns) AS u(n) WHERE u.n < 0) THEN
        DELETE FROM memory_core_actorturnhour x
        USING unnest(a_ids, a_hours) AS u(actor_id, hour)
        WHERE x.actor_id = u.actor_id AND x.hour = u.hour AND x.turns <= 0;
        DELETE FROM memory_core_tenantturnhour x
        USING unnest(a_ids, a_hours) AS u(actor_id, hour)
        JOIN memory_core_actor a ON a.id = u.actor_id
        WHERE x.tenant = coalesce(memory_core_tenant_of('actor:' || a.ref), '')
          AND x.hour = u.hour AND x.turns <= 0;
    END IF;
END;
$$;

CREATE OR REPLACE FUNCTION memory_core_turns_inserted() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
-- Every turn: two upserts straight from the statement's rows (memory_core_count_turns'
-- arrays, and its removal of emptied hours, are for the rare changes and removals).
BEGIN
    INSERT INTO memory_core_actorturnhour AS c (actor_id, hour, turns, alerts)
    SELECT n.actor_id, date_trunc('hour', n.created_at, 'UTC'), count(*),
           count(*) FILTER (WHERE n.pinned_omitted > 0)
    FROM new_rows n
    GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (actor_id, hour) DO UPDATE SET
        turns = c.turns + EXCLUDED.turns, alerts = c.alerts + EXCLUDED.alerts;
    INSERT INTO memory_core_tenantturnhour AS c (tenant, hour, turns, alerts)
    SELECT coalesce(memory_core_tenant_of('actor:' || a.ref), ''),
           date_trunc('hour', n.created_at, 'UTC'), count(*),
           count(*) FILTER (WHERE n.pinned_omitted > 0)
    FROM new_rows n JOIN memory_core_actor a ON a.id = n.actor_id
    GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (tenant, hour) DO UPDATE SET
        turns = c.turns + EXCLUDED.turns, alerts = c.alerts + EXCLUDED.alerts;
    RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION memory_core_turns_deleted() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE a bigint[]; h timestamptz[]; t int[]; p int[];
BEGIN
    SELECT array_agg(o.actor_id), array_agg(date_trunc('hour', o.created_at, 'UTC')),
           array_agg(-1), array_agg(-(o.pinned_omitted > 0)::int)
    INTO a, h, t, p FROM old_rows o;
    PERFORM memory_core_count_turns(a, h, t, p);
    RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION memory_core_turns_updated() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
-- Every row before counted out and every row after counted in, per actor and hour: what
-- cancels (a turn scrubbed by forget or erasure keeps its actor, time and pinned_omitted)
-- writes nothing.
DECLARE a bigint[]; h timestamptz[]; t int[]; p int[];
BEGIN
    SELECT array_agg(d.actor_id), array_agg(d.hour), array_agg(d.turns), array_agg(d.alerts)
    INTO a, h, t, p
    FROM (
        SELECT x.actor_id, x.hour, sum(x.turns)::int AS turns, sum(x.alerts)::int AS alerts
        FROM (
            SELECT n.actor_id, date_trunc('hour', n.created_at, 'UTC') AS hour, 1 AS turns,
                   (n.pinned_omitted > 0)::int AS alerts
            FROM new_rows n
            UNION ALL
            SELECT o.actor_id, date_trunc('hour', o.created_at, 'UTC'), -1,
                   -(o.pinned_omitted > 0)::int
            FROM old_rows o
        ) x
        GROUP BY x.actor_id, x.hour
        HAVING sum(x.turns) <> 0 OR sum(x.alerts) <> 0
    ) d;
    PERFORM memory_core_count_turns(a, h, t, p);
    RETURN NULL;
END;
$$;
