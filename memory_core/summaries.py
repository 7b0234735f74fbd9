"""Live memories per scope, from the counts the database keeps (memory_core_scopecount,
kept by the triggers of migration 0013 in every write's own transaction).

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


_SQL = """
WITH expired AS (
    SELECT m.scope_id, count(*) AS live, count(*) FILTER (WHERE m.author = 'agent') AS agent,
           count(*) FILTER (WHERE m.pinned) AS pinned
    FROM memory_core_memory m
    WHERE m.retired_at IS NULL AND m.expires_at <= statement_timestamp()
      AND (%(all)s OR m.scope_id = ANY(%(ids)s::bigint[]))
    GROUP BY m.scope_id
)
SELECT c.scope_id, c.held - coalesce(e.live, 0), c.agent - coalesce(e.agent, 0),
       c.pinned - coalesce(e.pinned, 0), s.token
FROM memory_core_scopecount c
JOIN memory_core_scope s ON s.id = c.scope_id
LEFT JOIN expired e ON e.scope_id = c.scope_id
WHERE (%(all)s OR c.scope_id = ANY(%(ids)s::bigint[])) AND c.held > coalesce(e.live, 0)
"""


def live_counts(scope_ids=None) -> dict[int, LiveCount]:
    """{scope id: LiveCount} for the given scopes (None: every scope); scopes holding no
    live memory are left out."""
    return {sid: count for sid, (_, count) in _read(scope_ids).items()}


def live_counts_by_token(scope_ids=None) -> dict[str, LiveCount]:
    """As live_counts, keyed by scope token (the dashboard's table), in the same query."""
    return dict(_read(scope_ids).values())


def _read(scope_ids) -> dict[int, tuple[str, LiveCount]]:
    params = {"all": scope_ids is None, "ids": sorted(scope_ids or [])}
    with connection.cursor() as cursor:
        cursor.execute(_SQL, params)
        return {
            sid: (token, LiveCount(live, agent, pinned))
            for sid, live, agent, pinned, token in cursor
        }
