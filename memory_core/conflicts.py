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

The query restates precedence (precedence.resolve, the rule) for every actor at once: the
chain as ranks (the actor's own scope 0, memberships in order, `global` last at 32767) and
the winner of a key as DISTINCT ON its narrowest rank. One statement over every actor is
what the conflicts page needs; a Python pass would resolve every chain in the organisation.
tests/test_rule_copies.py holds it to precedence.resolve over generated organisations.
"""

from dataclasses import dataclass

from django.db import connection

from memory_core.models import Memory

AUTHOR_COMBINATIONS = ("agent>human", "agent>agent", "human>human", "human>agent")

_SQL = """
WITH chain AS (
    SELECT a.id AS actor_id, a.scope_id, 0 AS rank FROM memory_core_actor a
    UNION ALL
    SELECT m.actor_id, m.scope_id, m.rank + 1 FROM memory_core_membership m
    UNION ALL
    SELECT a.id, g.id, 32767 FROM memory_core_actor a
    CROSS JOIN (SELECT id FROM memory_core_scope WHERE token = 'global') g
),
actors AS (
    SELECT DISTINCT c.actor_id FROM chain c JOIN memory_core_scope s ON s.id = c.scope_id
    WHERE %(all)s OR s.token = ANY(%(reach)s)
),
placed AS MATERIALIZED (
    SELECT c.actor_id, c.rank, m.id, m.key, m.author, m.scope_id
    FROM chain c
    JOIN actors USING (actor_id)
    JOIN memory_core_memory m ON m.scope_id = c.scope_id
    WHERE m.retired_at IS NULL AND (m.expires_at IS NULL OR m.expires_at > now())
),
winners AS (
    SELECT DISTINCT ON (actor_id, key) actor_id, key, id, rank, author, scope_id
    FROM placed ORDER BY actor_id, key, rank
),
pairs AS (
    SELECT w.id AS narrow_id, p.id AS wide_id, w.author || '>' || p.author AS authors,
           count(DISTINCT w.actor_id) AS actors, w.scope_id AS narrow_scope,
           p.scope_id AS wide_scope, w.key, min(w.rank) AS narrow_rank, min(p.rank) AS wide_rank
    FROM winners w
    JOIN placed p ON p.actor_id = w.actor_id AND p.key = w.key AND p.rank > w.rank
    GROUP BY w.id, p.id, w.author, p.author, w.scope_id, p.scope_id, w.key
)
SELECT narrow_id, wide_id, authors, actors, count(*) OVER () AS total
FROM pairs
JOIN memory_core_memory narrow ON narrow.id = narrow_id
JOIN memory_core_memory wide ON wide.id = wide_id
WHERE (%(scope)s::bigint IS NULL OR narrow_scope = %(scope)s OR wide_scope = %(scope)s)
  AND (%(authors)s::text IS NULL OR authors = %(authors)s)
  AND (narrow.text = wide.text) = %(duplicates)s
ORDER BY (authors = 'agent>human') DESC, pairs.key, narrow_rank, wide_rank, narrow_id, wide_id
LIMIT %(limit)s OFFSET %(offset)s
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
        cursor.execute(_SQL, params)
        rows = cursor.fetchall()
    if not rows:
        return [], 0
    ids = {r[0] for r in rows} | {r[1] for r in rows}
    by_id = Memory.objects.select_related("scope", "origin_actor").in_bulk(ids)
    page = [Conflict(by_id[n], by_id[w], a, c, bool(duplicates)) for n, w, a, c, _ in rows]
    return page, rows[0][4]
