"""Search over one actor's chain: filter to the chain first, rank second.

A ranking over rows outside the chain would be a cross-tenant leak, so every tier starts
from a MATERIALIZED set of the chain's live rows (a few hundred at most) and ranks only
those. That is also the fast plan: the planner cannot start from the GIN index over
every tenant's rows. Tiers, reported by name: `fts` (stored tsvector,
websearch_to_tsquery, ts_rank_cd), then `trigram` (pg_trgm word similarity, which
catches a typo of one word inside a longer fact) when fts finds nothing, then `like`.
"""

from django.db import connection, transaction

from memory_core.models.memories import TS_CONFIG

# Lower than pg_trgm's default 0.6, so one mistyped word in a short query still matches.
WORD_SIMILARITY_THRESHOLD = 0.4

_CHAIN_ROWS = """
    WITH chain_rows AS MATERIALIZED (
        SELECT m.key, m.text, m.search
        FROM memory_core_memory m
        WHERE m.scope_id IN (SELECT s.id FROM memory_core_scope s WHERE s.token = ANY(%(chain)s))
          AND m.retired_at IS NULL
          AND (m.expires_at IS NULL OR m.expires_at > now())
    )
"""

_TIERS = {
    "fts": _CHAIN_ROWS
    + f"""
    SELECT key FROM chain_rows, websearch_to_tsquery('{TS_CONFIG}', %(q)s) AS query
    WHERE search @@ query
    GROUP BY key
    ORDER BY max(ts_rank_cd(search, query)) DESC, key
    LIMIT %(limit)s
    """,
    "trigram": _CHAIN_ROWS
    + """
    SELECT key FROM chain_rows
    WHERE %(q)s <%% (key || ' ' || text)
    GROUP BY key
    ORDER BY max(word_similarity(%(q)s, key || ' ' || text)) DESC, key
    LIMIT %(limit)s
    """,
    "like": _CHAIN_ROWS
    + """
    SELECT key FROM chain_rows
    WHERE text ILIKE %(pattern)s ESCAPE '\\' OR key ILIKE %(pattern)s ESCAPE '\\'
    GROUP BY key
    ORDER BY key
    LIMIT %(limit)s
    """,
}


def _like_pattern(query: str) -> str:
    escaped = query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def rank_keys(chain, query: str, limit: int) -> tuple[list[str], str]:
    """The best `limit` keys of the chain for `query`, and the tier that found them."""
    params = {"chain": list(chain), "q": query, "limit": limit, "pattern": _like_pattern(query)}
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT set_config('pg_trgm.word_similarity_threshold', %s, true)",
            [str(WORD_SIMILARITY_THRESHOLD)],
        )
        tier = "like"
        for tier, sql in _TIERS.items():
            cursor.execute(sql, params)
            keys = [row[0] for row in cursor.fetchall()]
            if keys:
                return keys, tier
    return [], tier
