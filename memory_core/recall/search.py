"""Search over one actor's chain: filter to the chain first, rank second.

A ranking over rows outside the chain would be a cross-tenant leak, so every tier starts
from a MATERIALIZED set of the chain's live rows (a few hundred at most) and ranks only
those. That is also the fast plan: the planner cannot start from an index over every
tenant's rows. Tiers, reported by name:

- `hybrid` (an embedder is configured and embedded the query) or `fts` (it is not, or it
  failed): two ranks over the same candidate set, fused by reciprocal rank fusion.
  - lexical: a key matches when *any* of the query's meaningful words (its stemmed
    lexemes, stop words dropped, as in the stored tsvector) appears in its key or text,
    scored by the sum over matched words of ln(1 + keys / keys with that word): more words
    and rarer words rank higher, and one extra word in a question no longer loses a match;
  - semantic (hybrid only): cosine similarity between the query's vector and each row's,
    an exact scan of the chain's few hundred vectors (no approximate index: one would
    search across tenants, and is not needed at chain sizes). Only vectors made by the
    embedder that embedded the query are compared. What keeps an unrelated memory out: a
    similarity floor (the embedder's `min_similarity`) and a rank cut relative to the best
    match (RELATIVE_CUT of its similarity). Measured on tests/recall.
- `trigram` (pg_trgm word similarity, which catches a typo of one word inside a longer
  fact) when the first tier found nothing, then `like`.
"""

from memory_core.actors import chain_of
from memory_core.applied import LIVE_IN_CHAIN, RECORD_COLUMNS, chain_entries, entry_shapes
from memory_core.db import prepared
from memory_core.errors import Invalid
from memory_core.ledger import access_log
from memory_core.models import Actor
from memory_core.models.memories import TS_CONFIG
from memory_core.recall import providers
from memory_core.recall.embeddings import Vector
from memory_core.rules.facts import Record
from memory_core.rules.inputs import require, text_problem

MAX_QUERY_CHARS = 2000

# Lower than pg_trgm's default 0.6, so one mistyped word in a short query still matches.
WORD_SIMILARITY_THRESHOLD = 0.4
# A semantic match must reach this fraction of the best match's similarity.
RELATIVE_CUT = 0.5
# Reciprocal rank fusion's constant: a key's fused score is the sum, over the ranks that
# found it, of 1 / (RRF_K + its place there). 60 is the value of the method's paper.
RRF_K = 60

# All tiers in one statement over one materialised read of the chain. A tier runs only
# when the ones before it found nothing (each later CTE is gated on an InitPlan that asks
# whether the earlier ones returned a row), so the common case pays for the first alone.
# Without a query vector the semantic CTE is gated off as a whole (a one-time filter on
# the parameter). The similarity threshold is a literal comparison rather than pg_trgm's
# `<%` and its session setting, which cost a transaction and a round trip of their own.
_TIERS = f"""
    WITH chain_rows AS MATERIALIZED (
        SELECT m.id AS pk, {RECORD_COLUMNS}, m.search {LIVE_IN_CHAIN}
    ), words AS MATERIALIZED (
        -- Each meaningful word of the query as the stored tsvector spells it (stemmed, stop
        -- words gone), with a one-lexeme tsquery for it (quoted, so taken as it is).
        SELECT word, ($q$'$q$ || replace(replace(word, '\\', '\\\\'), $q$'$q$, $q$''$q$)
                      || $q$'$q$)::tsquery AS query
        FROM unnest(tsvector_to_array(to_tsvector('{TS_CONFIG}', %(q)s))) AS word
    ), key_words AS MATERIALIZED (
        SELECT DISTINCT c.key, w.word
        FROM chain_rows c JOIN words w ON c.search @@ w.query
    ), lexical AS (
        -- Rarity is counted over the chain's rows (about one per key).
        SELECT k.key, sum(ln(1 + n.rows::float8 / f.keys)) AS score
        FROM key_words k
        JOIN (SELECT word, count(*) AS keys FROM key_words GROUP BY word) f USING (word)
        CROSS JOIN (SELECT count(*) AS rows FROM chain_rows) n
        GROUP BY k.key
        ORDER BY score DESC, k.key
        LIMIT %(limit)s
    ), scored AS MATERIALIZED (
        -- The distance row by row, so that no kilobyte vector is carried into the grouping.
        SELECT c.key, 1 - (e.vector <=> %(vector)s::real[]::vector) AS similarity
        FROM chain_rows c
        JOIN memory_core_embedding e ON e.memory_id = c.pk
        WHERE %(vector)s::real[] IS NOT NULL
          AND e.embedder = %(embedder)s AND e.dims = %(dims)s
    ), semantic AS (
        SELECT key, max(similarity) AS similarity FROM scored GROUP BY key
    ), semantic_cut AS (
        SELECT key, similarity
        FROM semantic
        WHERE similarity >= %(min_similarity)s
          AND similarity >= {RELATIVE_CUT} * (SELECT max(similarity) FROM semantic)
        ORDER BY similarity DESC, key
        LIMIT %(limit)s
    ), fused AS (
        SELECT key, sum(1.0 / ({RRF_K} + place)) AS score
        FROM (
            SELECT key, row_number() OVER (ORDER BY score DESC, key) AS place FROM lexical
            UNION ALL
            SELECT key, row_number() OVER (ORDER BY similarity DESC, key) FROM semantic_cut
        ) AS places
        GROUP BY key
        ORDER BY score DESC, key
        LIMIT %(limit)s
    ), trigram AS (
        SELECT key, max(similarity) AS score
        FROM (
            SELECT key, word_similarity(%(q)s, key || ' ' || text) AS similarity
            FROM chain_rows
            WHERE NOT EXISTS (SELECT 1 FROM fused)
        ) AS scored
        WHERE similarity >= {WORD_SIMILARITY_THRESHOLD}
        GROUP BY key
        ORDER BY score DESC, key
        LIMIT %(limit)s
    ), plain AS (
        SELECT key
        FROM chain_rows
        WHERE NOT EXISTS (SELECT 1 FROM fused) AND NOT EXISTS (SELECT 1 FROM trigram)
          AND (text ILIKE %(pattern)s ESCAPE '\\' OR key ILIKE %(pattern)s ESCAPE '\\')
        GROUP BY key
        ORDER BY key
        LIMIT %(limit)s
    ), ranked AS (
        SELECT tier, key, row_number() OVER (ORDER BY tier_order, score DESC, key) AS place
        FROM (
            SELECT CASE WHEN %(vector)s::real[] IS NULL THEN 'fts' ELSE 'hybrid' END AS tier,
                   1 AS tier_order, key, score FROM fused
            UNION ALL SELECT 'trigram', 2, key, score FROM trigram
            UNION ALL SELECT 'like', 3, key, 0 FROM plain
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
    params = {"chain": list(chain), "q": query, "limit": limit, "pattern": _like_pattern(query)}
    found = providers.embed([query])
    if found is None:  # no embedder, or it failed: the lexical tiers answer alone
        return {**params, "vector": None, "embedder": None, "dims": None, "min_similarity": 1}
    embedder, (vector,) = found
    return {
        **params,
        "vector": Vector(vector),
        "embedder": embedder.identity,
        "dims": embedder.dims,
        "min_similarity": embedder.min_similarity,
    }


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
    with access_log.refusals_logged(principal, "search", actor_ref=actor.ref):
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
    access_log.record(
        principal,
        "search",
        200,
        actor_ref=actor.ref,
        memory_ids=[e.id for e in chosen],
        count=len(chosen),
        detail={"tier": tier, "query_chars": len(query)},
    )
    return items, tier
