"""Live memories per scope, from the counts the database keeps (memory_core_scopecount,
kept by the triggers of models/maintained.py, in every write's own transaction).

The table counts held memories (not retired). Live, as Memory.objects.live() says, also
means not expired, and expiry comes with the clock, not with a write: the held rows whose
`expires_at` has passed are counted here and subtracted, found on memory_expiry_idx (a
partial index of exactly the held rows that expire), so the figures are what a GROUP BY
over live memories would give, at the cost of the expired rows only.
"""

from dataclasses import dataclass

from django.db import connection


@dataclass(frozen=True)
class LiveCount:
    live: int = 0
    agent: int = 0
    pinned: int = 0

    @property
    def human(self) -> int:
        return self.live - self.agent


_EXPIRED = """
expired AS (
    SELECT m.scope_id, count(*) AS live, count(*) FILTER (WHERE m.author = 'agent') AS agent,
           count(*) FILTER (WHERE m.pinned) AS pinned
    FROM memory_core_memory m
    WHERE m.retired_at IS NULL AND m.expires_at <= statement_timestamp()
      AND (%(all)s OR m.scope_id = ANY(%(ids)s::bigint[]))
    GROUP BY m.scope_id
)"""
_COUNTED = """
SELECT c.scope_id, c.held - coalesce(e.live, 0) AS live, c.agent - coalesce(e.agent, 0) AS agent,
       c.pinned - coalesce(e.pinned, 0) AS pinned
FROM memory_core_scopecount c
LEFT JOIN expired e ON e.scope_id = c.scope_id
WHERE (%(all)s OR c.scope_id = ANY(%(ids)s::bigint[])) AND c.held > coalesce(e.live, 0)
"""
_SQL = f"""
WITH {_EXPIRED}, counted AS ({_COUNTED})
SELECT c.scope_id, c.live, c.agent, c.pinned, s.token
FROM counted c JOIN memory_core_scope s ON s.id = c.scope_id
"""


def live_counts(scope_ids=None) -> dict[int, LiveCount]:
    """{scope id: LiveCount} for the given scopes (None: every scope); scopes holding no
    live memory are left out."""
    return {sid: count for sid, (_, count) in _read(scope_ids).items()}


def _read(scope_ids) -> dict[int, tuple[str, LiveCount]]:
    params = {"all": scope_ids is None, "ids": sorted(scope_ids or [])}
    with connection.cursor() as cursor:
        cursor.execute(_SQL, params)
        return {
            sid: (token, LiveCount(live, agent, pinned))
            for sid, live, agent, pinned, token in cursor
        }


# The biggest scopes first, with how many scopes hold live memories and the sums over all of
# them: the dashboard's table in one statement, without bringing every scope's row to Python
# (11,200 of them at the bench's 1m). Tokens are joined to the top rows only (and their ties
# on the count, which the token orders): joining all 11,200 and sorting them with a window
# took 14 ms of the dashboard's time.
_TOP_SQL = f"""
WITH {_EXPIRED},
counted AS ({_COUNTED}),
totals AS (SELECT count(*) AS scopes, sum(live) AS live, sum(agent) AS agent FROM counted),
top AS (SELECT * FROM counted ORDER BY live DESC FETCH FIRST %(limit)s ROWS WITH TIES)
SELECT s.token, t.live, t.agent, totals.scopes, totals.live, totals.agent
FROM top t JOIN memory_core_scope s ON s.id = t.scope_id CROSS JOIN totals
ORDER BY t.live DESC, s.token
LIMIT %(limit)s
"""


@dataclass(frozen=True)
class TopCounts:
    rows: list[tuple[str, LiveCount]]  # the biggest scopes, biggest first
    scopes: int = 0  # scopes holding a live memory
    live: int = 0
    agent: int = 0

    @property
    def human(self) -> int:
        return self.live - self.agent


def top_live_counts(limit: int, scope_ids=None) -> TopCounts:
    """The `limit` scopes with the most live memories (ties by token), and the totals over
    every scope (None: every scope)."""
    params = {"all": scope_ids is None, "ids": sorted(scope_ids or []), "limit": limit}
    with connection.cursor() as cursor:
        cursor.execute(_TOP_SQL, params)
        found = cursor.fetchall()
    if not found:
        return TopCounts([])
    _, _, _, scopes, live, agent = found[0]
    rows = [(token, LiveCount(n, a)) for token, n, a, *_ in found]
    return TopCounts(rows, scopes, int(live), int(agent))
