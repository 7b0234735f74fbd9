"""Conflicts: a key answered at more than one scope of some actor's chain.

For every chain, the narrowest live value of a key wins and each wider live value of that
key is beaten. A conflict is one (winner, beaten) pair; a pair shared by many actors (a
team's value over the tenant's) is listed once, with how many actors it applies to.
Agent-over-human pairs come first: there an agent's conclusion is overriding what a person
decided, which is what an administrator should look at.

A pair whose two values are the same text is no conflict: nothing a person decided is
overridden, the narrower copy merely repeats it (typically an agent's note left live after
a person republished it wider). Such pairs are duplicates, asked for apart
(`duplicates=True`); the remedy is to retire the narrower copy.

The pairs are data the writes keep: memory_core_chainconflict holds, per actor and key, the
pairs of that actor's chain over its held (not retired) values, rewritten by the triggers of
models/maintained.py in the transaction of every write that can change them. Precedence
there is memory_core_chain_conflicts (rules/precedence.sql: precedence.resolve for many
chains at once) over memory_core_chains (rules/chain.sql); the pairs touched are regrouped
over every actor (memory_core_conflictpair, counts kept as increments). A superuser's read
is a page of those pairs in index order (as below: agent over person first, then key, then
the pair's narrowest positions in the chains it spans); a narrower reach groups the rows of
the actors in it (memory_core_chains_holding: whose chain holds a scope of the reach).
Expiry is the clock's, not a write's: an (actor, key) whose chain holds a value that has
expired since is resolved again at read time, by the same function over live values
(memory_expiry_idx finds them; there are normally none, and while there are any the
superuser's read groups rows too). tests/test_rule_copies.py holds the result to
precedence.resolve over generated organisations.
"""

from dataclasses import dataclass

from django.db import connection

from memory_core.models import Memory

AUTHOR_COMBINATIONS = ("agent>human", "agent>agent", "human>human", "human>agent")

_SQL = """
WITH reached AS (
    -- The actors in the reach: those whose chain holds one of its scopes (rules/chain.sql).
    SELECT DISTINCT h.actor_id
    FROM memory_core_scope r
    CROSS JOIN LATERAL memory_core_chains_holding(ARRAY[r.id]) h
    WHERE %(all)s OR r.token = ANY(%(reach)s)
),
stale AS MATERIALIZED (
    -- (actor, key) whose kept pairs count a value that has expired: resolved again below.
    SELECT DISTINCT h.actor_id, e.key
    FROM memory_core_memory e
    CROSS JOIN LATERAL memory_core_chains_holding(ARRAY[e.scope_id]) h
    WHERE e.retired_at IS NULL AND e.expires_at <= statement_timestamp()
      AND (%(all)s OR h.actor_id IN (SELECT actor_id FROM reached))
),
kept AS (
    SELECT c.actor_id, c.key, c.narrow_id, c.wide_id, c.narrow_scope_id, c.wide_scope_id,
           c.narrow_rank, c.wide_rank, c.authors, c.duplicate
    FROM memory_core_chainconflict c
    -- An array, not IN (subquery): the planner cannot tell how few actors a reach holds
    -- and walked the whole table (683,000 rows at 1m, 40 ms) rather than probe the
    -- primary key once per actor (3,400 rows for a tenant's 50 actors).
    WHERE (%(all)s OR c.actor_id = ANY(ARRAY(SELECT actor_id FROM reached)))
      AND NOT EXISTS (SELECT 1 FROM stale s WHERE s.actor_id = c.actor_id AND s.key = c.key)
    UNION ALL
    SELECT * FROM memory_core_chain_conflicts(
        coalesce((SELECT array_agg(actor_id) FROM stale), '{}'),
        coalesce((SELECT array_agg(key) FROM stale), '{}'),
        statement_timestamp()
    )
),
pairs AS (
    SELECT narrow_id, wide_id, authors, count(*) AS actors, min(narrow_rank) AS narrow_rank,
           min(wide_rank) AS wide_rank, key, duplicate
    FROM kept
    WHERE (%(scope)s::bigint IS NULL OR narrow_scope_id = %(scope)s OR wide_scope_id = %(scope)s)
      AND (%(authors)s::text IS NULL OR authors = %(authors)s)
    GROUP BY narrow_id, wide_id, authors, key, duplicate
)
"""

# One page of the kind asked for, with how many pairs there are of it and of the other kind
# (conflicts beside duplicates), in one statement.
_PAGE_SQL = (
    _SQL
    + """
SELECT narrow_id, wide_id, authors, actors, total, others
FROM (
    SELECT p.*, count(*) FILTER (WHERE duplicate = %(duplicates)s) OVER () AS total,
           count(*) FILTER (WHERE duplicate <> %(duplicates)s) OVER () AS others
    FROM pairs p
) counted
WHERE duplicate = %(duplicates)s
ORDER BY (authors = 'agent>human') DESC, key, narrow_rank, wide_rank, narrow_id, wide_id
LIMIT %(limit)s OFFSET %(offset)s
"""
)
_TOTALS_SQL = (
    _SQL
    + """
SELECT count(*) FILTER (WHERE duplicate = %(duplicates)s),
       count(*) FILTER (WHERE duplicate <> %(duplicates)s)
FROM pairs
"""
)

# Every actor (the superuser), and no held value has expired (the usual case): the pairs as
# kept, grouped over every actor already (memory_core_conflictpair), read in the page's
# order on conflictpair_page_idx.
_ANY_EXPIRED_SQL = """
SELECT EXISTS (
    SELECT 1 FROM memory_core_memory
    WHERE retired_at IS NULL AND expires_at <= statement_timestamp()
)
"""
_KEPT_FILTERS = """
    (%(scope)s::bigint IS NULL OR narrow_scope_id = %(scope)s OR wide_scope_id = %(scope)s)
    AND (%(authors)s::text IS NULL OR authors = %(authors)s)
"""
_KEPT_PAGE_SQL = f"""
SELECT narrow_id, wide_id, authors, actors FROM memory_core_conflictpair
WHERE duplicate = %(duplicates)s AND {_KEPT_FILTERS}
ORDER BY duplicate, agent_over_human DESC, key, narrow_rank, wide_rank, narrow_id, wide_id
LIMIT %(limit)s OFFSET %(offset)s
"""
_KEPT_TOTALS_SQL = f"""
SELECT count(*) FILTER (WHERE duplicate = %(duplicates)s),
       count(*) FILTER (WHERE duplicate <> %(duplicates)s)
FROM memory_core_conflictpair WHERE {_KEPT_FILTERS}
"""


@dataclass(frozen=True)
class Conflict:
    narrow: Memory
    wide: Memory
    authors: str  # "agent>human": the narrower value's author, then the wider one's
    actors: int  # how many chains this pair is a conflict in
    duplicate: bool = False  # the two values are the same text: no conflict, a duplicate


def conflicts(*, reach_tokens=None, scope=None, authors=None, duplicates=False, limit=50, offset=0):
    """(page of Conflicts, total). reach_tokens=None means every actor (superuser).
    duplicates=False: the pairs whose values differ (the conflicts); True: the pairs whose
    values are the same text (the duplicates)."""
    page, total, _ = conflicts_page(
        reach_tokens=reach_tokens,
        scope=scope,
        authors=authors,
        duplicates=duplicates,
        limit=limit,
        offset=offset,
    )
    return page, total


def conflicts_page(
    *, reach_tokens=None, scope=None, authors=None, duplicates=False, limit=50, offset=0
):
    """(page of Conflicts, total, others): as conflicts(), and how many pairs of the other
    kind (duplicates beside conflicts, or conflicts beside duplicates) match the same
    filters."""
    if authors is not None and authors not in AUTHOR_COMBINATIONS:
        raise ValueError(f"authors must be one of {AUTHOR_COMBINATIONS}")
    params = {
        "all": reach_tokens is None,
        "reach": list(reach_tokens or []),
        "scope": scope.id if scope is not None else None,
        "authors": authors,
        "duplicates": bool(duplicates),
        "limit": limit,
        "offset": offset,
    }
    with connection.cursor() as cursor:
        cursor.execute(_ANY_EXPIRED_SQL)
        if reach_tokens is None and not cursor.fetchone()[0]:
            cursor.execute(_KEPT_PAGE_SQL, params)
            found = cursor.fetchall()
            cursor.execute(_KEPT_TOTALS_SQL, params)
            total, others = cursor.fetchone()
            if not found:
                return [], total, others
            rows = [(*row, total, others) for row in found]
        else:
            cursor.execute(_PAGE_SQL, params)
            rows = cursor.fetchall()
        if not rows:
            # Past the end, or nothing of this kind: the counts alone.
            cursor.execute(_TOTALS_SQL, params)
            total, others = cursor.fetchone()
            return [], total, others
    ids = {r[0] for r in rows} | {r[1] for r in rows}
    by_id = Memory.objects.select_related("scope", "origin_actor").in_bulk(ids)
    page = [Conflict(by_id[n], by_id[w], a, c, bool(duplicates)) for n, w, a, c, _, _ in rows]
    return page, rows[0][4], rows[0][5]
