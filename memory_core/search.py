"""Search over one actor's chain: filter to the chain first, rank second.

A ranking over rows outside the chain would be a cross-tenant leak, so every tier starts
from a MATERIALIZED set of the chain's live rows (a few hundred at most) and ranks only
those. That is also the fast plan: the planner cannot start from the GIN index over
every tenant's rows. Tiers, reported by name: `fts` (stored tsvector,
websearch_to_tsquery, ts_rank_cd), then `trigram` (pg_trgm word similarity, which
catches a typo of one word inside a longer fact) when fts finds nothing, then `like`.
"""

from memory_core import audit, prepared
from memory_core.actors import chain_of
from memory_core.applied import LIVE_IN_CHAIN, RECORD_COLUMNS, chain_entries, entry_shapes
from memory_core.errors import Invalid
from memory_core.facts import Record
from memory_core.inputs import require, text_problem
from memory_core.models import Actor
from memory_core.models.memories import TS_CONFIG

MAX_QUERY_CHARS = 2000

# Lower than pg_trgm's default 0.6, so one mistyped word in a short query still matches.
WORD_SIMILARITY_THRESHOLD = 0.4

# All three tiers in one statement over one materialised read of the chain. A tier runs
# only when the ones before it found nothing (each later CTE is gated on an InitPlan that
# asks whether the earlier ones returned a row), so the common case pays for fts alone.
# The similarity threshold is a literal comparison rather than pg_trgm's `<%` and its
# session setting, which cost a transaction and a round trip of their own.
_TIERS = f"""
    WITH chain_rows AS MATERIALIZED (
        SELECT {RECORD_COLUMNS}, m.search {LIVE_IN_CHAIN}
    ), fts AS (
        SELECT key, max(ts_rank_cd(search, query)) AS score
        FROM chain_rows, websearch_to_tsquery('{TS_CONFIG}', %(q)s) AS query
        WHERE search @@ query
        GROUP BY key
        ORDER BY score DESC, key
        LIMIT %(limit)s
    ), trigram AS (
        SELECT key, max(similarity) AS score
        FROM (
            SELECT key, word_similarity(%(q)s, key || ' ' || text) AS similarity
            FROM chain_rows
            WHERE NOT EXISTS (SELECT 1 FROM fts)
        ) AS scored
        WHERE similarity >= {WORD_SIMILARITY_THRESHOLD}
        GROUP BY key
        ORDER BY score DESC, key
        LIMIT %(limit)s
    ), plain AS (
        SELECT key
        FROM chain_rows
        WHERE NOT EXISTS (SELECT 1 FROM fts) AND NOT EXISTS (SELECT 1 FROM trigram)
          AND (text ILIKE %(pattern)s ESCAPE '\\' OR key ILIKE %(pattern)s ESCAPE '\\')
        GROUP BY key
        ORDER BY key
        LIMIT %(limit)s
    ), ranked AS (
        SELECT tier, key, row_number() OVER (ORDER BY score DESC, key) AS place
        FROM (
            SELECT 'fts' AS tier, key, score FROM fts
            UNION ALL SELECT 'trigram', key, score FROM trigram
            UNION ALL SELECT 'like', key, 0 FROM plain
        ) AS found
    )
"""
# Every live row of the chain (the fields of a facts.Record) with its key's place and
# tier when the key was found: a turn with a query, and a search, need both, and this
# reads the chain once for the two.
RANKED_CHAIN = (
    _TIERS
    + """
    SELECT c.uid, c.token, c.key, c.text, c.author, c.pinned, c.created_at, c.expires_at,
           r.place, r.tier
    FROM chain_rows c LEFT JOIN ranked r ON r.key = c.key
"""
)


def _like_pattern(query: str) -> str:
    escaped = query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _params(chain, query: str, limit: int) -> dict:
    return {"chain": list(chain), "q": query, "limit": limit, "pattern": _like_pattern(query)}


def ranked_chain(chain, query: str, limit: int) -> tuple[list[Record], list[str], str]:
    """The chain's live rows, and the best `limit` keys among them with their tier."""
    records, places, tier = [], {}, "like"
    for *fields, place, found_in in prepared.fetch_all(RANKED_CHAIN, _params(chain, query, limit)):
        records.append(Record(*fields))
        if place is not None:
            places[fields[2]], tier = place, found_in
    return records, sorted(places, key=places.__getitem__), tier


def check_query(query: str | None) -> str | None:
    """A turn's `query` or a search's `q`: bounded free text; blank means none."""
    require(text_problem(query, "query", MAX_QUERY_CHARS))
    if query is None or not query.strip():
        return None
    return query.strip()


def search_memories(actor: Actor, query: str, *, principal, limit: int = 10):
    """The best `limit` keys for the query, precedence-resolved, plus every pinned key."""
    with audit.refusals_logged(principal, "search", actor_ref=actor.ref):
        query = check_query(query)
        if query is None:
            raise Invalid("q is required")
        if limit < 1 or limit > 100:
            raise Invalid("limit must be between 1 and 100")
    chain = chain_of(actor)
    records, keys, tier = ranked_chain(chain, query, limit)
    by_key = {e.key: e for e in chain_entries(chain, records)}
    chosen = [by_key[k] for k in keys if k in by_key]
    ranked = set(keys)
    chosen += [e for e in by_key.values() if e.pinned and e.key not in ranked]
    items = entry_shapes(chosen)
    audit.record(
        principal,
        "search",
        200,
        actor_ref=actor.ref,
        memory_ids=[e.id for e in chosen],
        count=len(chosen),
        detail={"tier": tier, "query_chars": len(query)},
    )
    return items, tier
