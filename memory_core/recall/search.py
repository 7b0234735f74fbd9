"""Search over one actor's chain: filter to the chain first, rank second.

A ranking over rows outside the chain would be a cross-tenant leak, so every tier starts
from a MATERIALIZED set of the chain's live rows (a few hundred at most) and ranks only
those. That is also the fast plan: the planner cannot start from an index over every
tenant's rows. Tiers, reported by name:

- `hybrid` (an embedder is configured, embedded the query, and the chain holds vectors it
  made): two ranks of every key of the chain, fused by reciprocal rank fusion:
  - lexical: a key matches when *any* of the query's content words is in its key or text,
    scored by the sum over matched words of ln(1 + rows / keys with that word): more words
    and rarer words rank higher. Content words: the query's words as the stored
    `search_simple` spells them (lower case, accents removed), less the stop words of
    English, Portuguese, Spanish and German (stopwords.py). A word matches a key that has
    it, with or without accents; one that starts with it less its last two letters (at
    least four: `gatos` finds `gato`, `Hunde` finds `Hund`); or its English stem (in
    the stored English `search`: `meetings` finds `meeting`);
  - semantic: cosine similarity between the query's vector and each row's, an exact scan of
    the chain's few hundred vectors (no approximate index: one would search across
    tenants, and is not needed at chain sizes). Only vectors made by the embedder that
    embedded the query are compared.
  Each rank places only the keys it finds: the lexical rank a key that matched a word,
  the semantic rank a key whose similarity reaches the embedder's floor (`min_similarity`)
  and RELATIVE_CUT of the best match's. A key's fused score is the sum of 1 / (RRF_K + its
  place) in each rank that placed it, and a key either found may be returned; the floor is
  what bounds the answers to a question nothing on file answers. (Placing every key in the
  semantic rank, as before, only reordered the lexical matches that missed the floor or the
  cut, cost 0.6-0.7 ms at the bench's 1m, and found 1 more of DEV's 168 at @5.) Calibrated
  on the DEV half of tests/recall/generalise (docs/agents/recall.md).
- `fts`: the lexical rank alone, when there is no vector to compare (no embedder, it
  failed, or none of the chain's vectors is its own).
- `trigram` (pg_trgm word similarity, which catches a typo of one word inside a longer
  fact) when `fts` found nothing, then `like`. Never after the semantic rank: a question
  with no word in common with any memory gets its nearest memories above the floor, or
  nothing, not substring noise.

Three statements share the tiers: RANKED_CHAIN (every live row and its key's place: the
console's finder and scope search, recall_eval), RANKED_SELECTION (a turn with a query:
precedence and selection done in the same statement, only the shown rows returned) and
RANKED_SEARCH (a search: the ranked keys and every pinned one, with their shapes).
"""

from django.utils import timezone

from memory_core.actors import chain_of
from memory_core.applied import (
    COUNTS,
    KEPT_ROWS,
    KEYED,
    LIVE_COLUMNS,
    LIVE_WITH_CHAIN_RANK,
    entry_shapes,
    selection_of,
    shape_row_of,
)
from memory_core.db import prepared
from memory_core.errors import Invalid
from memory_core.ledger import access_log
from memory_core.models import Actor
from memory_core.models.memories import SIMPLE_TS_CONFIG, TS_CONFIG
from memory_core.recall import providers, stopwords
from memory_core.recall.embeddings import Vector
from memory_core.rules.facts import Record
from memory_core.rules.inputs import require, text_problem
from memory_core.rules.precedence import resolve

MAX_QUERY_CHARS = 2000

# Lower than pg_trgm's default 0.6, so one mistyped word in a short query still matches.
WORD_SIMILARITY_THRESHOLD = 0.4
# A key found by meaning alone must also reach this fraction of the best match's
# similarity: one close match does not drag weak ones in. On DEV (docs/agents/recall.md) it
# changes little (@5 99 -> 98, off-topic results 75 -> 74); 0.6 loses answers.
RELATIVE_CUT = 0.5
# Reciprocal rank fusion's constant: a key's fused score is the sum, over the ranks that
# found it, of 1 / (RRF_K + its place there). 60 is the value of the method's paper.
RRF_K = 60
# A content word of at least PREFIX_MIN letters also matches the words that start with it
# less its last PREFIX_DROP letters (never fewer than PREFIX_MIN): a stemmer for no language
# in particular, which finds plural, gender and verb endings in any of them.
PREFIX_MIN = 4
PREFIX_DROP = 2

# The stop words as an SQL array literal (they are plain lower-case ASCII letters), part of
# the statement's text, so a prepared statement carries them once.
assert all(w.isascii() and w.isalpha() and w.islower() for w in stopwords.STOPWORDS)
_STOP_ARRAY = "ARRAY[" + ",".join(f"'{w}'" for w in sorted(stopwords.STOPWORDS)) + "]::text[]"


def _tsquery(text_sql: str) -> str:
    """SQL for a one-lexeme tsquery of a word (quoted, so taken as it is)."""
    return f"($q$'$q$ || replace(replace({text_sql}, '\\', '\\\\'), $q$'$q$, $q$''$q$) || $q$'$q$)"


# A word less its last PREFIX_DROP letters, never shorter than PREFIX_MIN.
_PREFIX = f"left(word, greatest({PREFIX_MIN}, length(word) - {PREFIX_DROP}))"

# The query's content words as search_simple spells them, each with its one-word tsqueries:
# against search_simple, the word's prefix, or the word itself when it is shorter than
# PREFIX_MIN (the prefix also matches the word itself, so one test does for both: 0.04 ms
# less of a turn with a query at the bench's 1m than testing each); against search, its
# English stem (NULL when English has none for it).
_WORDS = f"""
        SELECT word,
               CASE WHEN length(word) >= {PREFIX_MIN}
                    THEN ({_tsquery(_PREFIX)} || ':*')::tsquery
                    ELSE {_tsquery("word")}::tsquery
               END AS simple,
               NULLIF(array_to_string(ARRAY(
                   SELECT {_tsquery("stem")}
                   FROM unnest(tsvector_to_array(to_tsvector('{TS_CONFIG}', word))) AS stem
               ), ' | '), '')::tsquery AS stemmed
        FROM unnest(tsvector_to_array(to_tsvector('{SIMPLE_TS_CONFIG}', %(q)s))) AS word
        WHERE word <> ALL({_STOP_ARRAY})
"""
# What the lexical rank looks for in a query (tests, and recall_eval's diagnosis).
QUERY_WORDS = f"SELECT ARRAY(SELECT word FROM ({_WORDS}) AS w ORDER BY word)"

# All tiers in one statement over one materialised read of the chain. A tier runs only
# when the ones before it found nothing (each later CTE is gated on an InitPlan that asks
# whether the earlier ones returned a row), so the common case pays for the first alone.
# Without a query vector the semantic CTE is gated off as a whole (a one-time filter on
# the parameter). The similarity threshold is a literal comparison rather than pg_trgm's
# `<%` and its session setting, which cost a transaction and a round trip of their own.
#
# `live` is the chain's live rows as applied.SELECTED_IN_CHAIN reads them, with the columns
# the ranking reads from the heap; the ranked statements below end as that one does.
_TIERS = f"""
    WITH query_vector AS MATERIALIZED (
        -- Cast once: in the distance's own expression the cast ran for every row (~1 µs).
        SELECT %(vector)s::real[]::vector AS vector
    ), live AS MATERIALIZED (
        SELECT {LIVE_COLUMNS}, m.uid, m.text, m.author, m.search, m.search_simple
        {LIVE_WITH_CHAIN_RANK}
    ), words AS MATERIALIZED ({_WORDS}
    ), key_words AS MATERIALIZED (
        SELECT DISTINCT c.key, w.word
        FROM live c JOIN words w
          ON c.search_simple @@ w.simple OR c.search @@ w.stemmed
    ), lexical AS (
        -- Rarity is counted over the chain's rows (about one per key).
        SELECT k.key, sum(ln(1 + n.rows::float8 / f.keys)) AS score
        FROM key_words k
        JOIN (SELECT word, count(*) AS keys FROM key_words GROUP BY word) f USING (word)
        CROSS JOIN (SELECT count(*) AS rows FROM live) n
        GROUP BY k.key
    ), scored AS MATERIALIZED (
        -- The chain's vectors in one index scan over the array of its ids (0.3 ms less at
        -- the bench's 1m than a probe per row), each distance taken in that scan: no
        -- kilobyte vector is copied into a join (0.4-0.6 ms less at 1m).
        SELECT e.memory_id,
               1 - (e.vector <=> (SELECT vector FROM query_vector)) AS similarity
        FROM memory_core_embedding e
        WHERE %(vector)s::real[] IS NOT NULL
          AND e.memory_id = ANY(ARRAY(SELECT id FROM live))
          AND e.embedder = %(embedder)s AND e.dims = %(dims)s
    ), semantic AS (
        -- What the semantic rank finds: the keys whose similarity reaches the floor
        -- (`min_similarity`) and RELATIVE_CUT of the best match's. Only those rows are
        -- joined to their keys (0.6-0.7 ms less at 1m than placing every key).
        SELECT c.key, max(d.similarity) AS similarity
        FROM scored d JOIN live c ON c.id = d.memory_id
        WHERE d.similarity >= greatest(%(min_similarity)s,
                                       {RELATIVE_CUT} * (SELECT max(similarity) FROM scored))
        GROUP BY c.key
    ), semantic_places AS (
        -- Each rank's place for every key it found.
        SELECT key, row_number() OVER (ORDER BY similarity DESC, key) AS place FROM semantic
    ), lexical_places AS (
        SELECT key, row_number() OVER (ORDER BY score DESC, key) AS place FROM lexical
    ), fused AS (
        -- A key's fused score: the sum over the ranks that place it of 1 / (RRF_K + place).
        SELECT coalesce(l.key, s.key) AS key,
               coalesce(1.0 / ({RRF_K} + l.place), 0) + coalesce(1.0 / ({RRF_K} + s.place), 0)
                   AS score
        FROM lexical_places l FULL JOIN semantic_places s ON s.key = l.key
        ORDER BY score DESC, key
        LIMIT %(limit)s
    ), trigram AS (
        SELECT key, max(similarity) AS score
        FROM (
            SELECT key, word_similarity(%(q)s, key || ' ' || text) AS similarity
            FROM live
            WHERE NOT EXISTS (SELECT 1 FROM fused) AND NOT EXISTS (SELECT 1 FROM scored)
        ) AS scored
        WHERE similarity >= {WORD_SIMILARITY_THRESHOLD}
        GROUP BY key
        ORDER BY score DESC, key
        LIMIT %(limit)s
    ), plain AS (
        SELECT key
        FROM live
        WHERE NOT EXISTS (SELECT 1 FROM fused) AND NOT EXISTS (SELECT 1 FROM scored)
          AND NOT EXISTS (SELECT 1 FROM trigram)
          AND (text ILIKE %(pattern)s ESCAPE '\\' OR key ILIKE %(pattern)s ESCAPE '\\')
        GROUP BY key
        ORDER BY key
        LIMIT %(limit)s
    ), ranked AS (
        SELECT tier, key, row_number() OVER (ORDER BY tier_order, score DESC, key) AS place
        FROM (
            SELECT CASE WHEN EXISTS (SELECT 1 FROM scored) THEN 'hybrid' ELSE 'fts' END AS tier,
                   1 AS tier_order, key, score FROM fused
            UNION ALL SELECT 'trigram', 2, key, score FROM trigram
            UNION ALL SELECT 'like', 3, key, 0 FROM plain
        ) AS found
    )
"""
# Every live row of the chain (the fields of a facts.Record) with its key's place and
# tier when the key was found: a turn with a query, and a search, need both, and this
# reads the chain once for the two. The last column says whether the semantic rank ran
# (the chain holds vectors of the query's embedder): then an empty answer is `hybrid`'s.
RANKED_CHAIN = (
    _TIERS
    + """
    SELECT c.uid, c.token, c.key, c.text, c.author, c.pinned, c.created_at, c.expires_at,
           r.place, r.tier, EXISTS (SELECT 1 FROM scored)
    FROM live c LEFT JOIN ranked r ON r.key = c.key
"""
)


def _ranked(kept: str, counts: str, extra: str) -> str:
    """The tiers, then applied.SELECTED_IN_CHAIN's ending: `kept` chooses the keys (with
    their place), `counts` is the one row beside them, `extra` the columns added to each."""
    return (
        _TIERS
        + f"""
    , keyed AS MATERIALIZED ({KEYED}
    ), kept AS ({kept}
    ), counts AS ({counts}
    )
    {KEPT_ROWS.format(extra=extra)}
"""
    )


# A turn with a query: applied.SELECTED_IN_CHAIN with the ranked keys taken after the pinned
# ones and before the rest, in their place's order (selection.select's relevant keys); each
# kept row also says its key's place.
RANKED_SELECTION = _ranked(
    """
        SELECT k.key, r.place
        FROM keyed k JOIN live w ON w.key = k.key AND w.rank = k.rank
        LEFT JOIN ranked r ON r.key = k.key
        ORDER BY k.pinned DESC, CASE WHEN NOT k.pinned THEN r.place END NULLS LAST,
                 k.rank, w.created_at DESC, k.key COLLATE "C"
        LIMIT %(room)s""",
    COUNTS,
    ", kept.place",
)
# A search: the ranked keys and every pinned key, each kept row with its key's place, and
# (on every row, and on the one row of nulls when nothing is kept) the tier that answered
# and whether the semantic rank ran.
RANKED_SEARCH = _ranked(
    """
        SELECT k.key, r.place
        FROM keyed k LEFT JOIN ranked r ON r.key = k.key
        WHERE r.place IS NOT NULL OR k.pinned
        -- A fence: the kept keys (the ranked and the pinned, a dozen or so) are chosen
        -- first, then their rows read by id. Flattened into the join below, the planner
        -- took them for the chain's ~500 rows and read the threads table whole to answer
        -- each row's EXISTS (3,098 rows at the bench's 1m, and growing with every thread):
        -- 3.35 against 2.77 ms at 1m. With statistics that say the memory table is empty
        -- it read every memory row per pair of chain rows (9 s for a chain of 300).
        OFFSET 0""",
    """
        SELECT 0 AS offered, 0 AS pinned_keys, (SELECT min(tier) FROM ranked) AS tier,
               EXISTS (SELECT 1 FROM scored) AS ran""",
    ", kept.place, counts.tier, counts.ran",
)


def _like_pattern(query: str) -> str:
    escaped = query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _params(chain, query: str, limit: int) -> dict:
    params = {"chain": list(chain), "q": query, "limit": limit, "pattern": _like_pattern(query)}
    found = providers.embed_query(query)
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
    records, places, tier, semantic = [], {}, "like", False
    for *fields, place, found_in, ran in prepared.fetch_all(
        RANKED_CHAIN, _params(chain, query, limit)
    ):
        records.append(Record(*fields))
        semantic = ran
        if place is not None:
            places[fields[2]], tier = place, found_in
    if not places and semantic:
        tier = "hybrid"  # the semantic rank ran (nothing reached the floor): no later tier
    return records, sorted(places, key=places.__getitem__), tier


def content_words(query: str) -> list[str]:
    """The words of `query` the lexical rank looks for, sorted."""
    return list(prepared.fetch_one(QUERY_WORDS, {"q": query})[0])


def check_query(query: str | None) -> str | None:
    """A turn's `query` or a search's `q`: bounded free text; blank means none."""
    require(text_problem(query, "query", MAX_QUERY_CHARS))
    if query is None or not query.strip():
        return None
    return query.strip()


def ranked_selection(chain, query: str, room: int):
    """What a turn with this query keeps (applied.selection_of over RANKED_SELECTION): the
    same as selection.select(chain_entries(chain), chain, room, ranked_chain's keys), chosen
    in the database with the ranking, in one statement."""
    room = max(0, room)
    params = _params(chain, query, room)
    rows = prepared.fetch_all(RANKED_SELECTION, {**params, "room": room})
    places = {row[2]: row[19] for row in rows if row[0] is not None and row[19] is not None}
    return selection_of(chain, rows, room, places)


def search_memories(actor: Actor, query: str, *, principal, limit: int = 10):
    """The best `limit` keys for the query, precedence-resolved, plus every pinned key."""
    with access_log.refusals_logged(principal, "search", actor_ref=actor.ref):
        query = check_query(query)
        if query is None:
            raise Invalid("q is required")
        if limit < 1 or limit > 100:
            raise Invalid("limit must be between 1 and 100")
    chain = chain_of(actor)
    rows = prepared.fetch_all(RANKED_SEARCH, _params(chain, query, limit))
    kept_rows = [row for row in rows if row[0] is not None]
    places = {row[2]: row[19] for row in kept_rows if row[19] is not None}
    tier, ran = rows[0][20], rows[0][21]
    if not places:
        tier = "hybrid" if ran else "like"  # nothing found (see ranked_chain)
    entries = resolve([Record(*row[:8]) for row in kept_rows], chain, now=timezone.now())
    chosen = sorted((e for e in entries if e.key in places), key=lambda e: places[e.key])
    chosen += [e for e in entries if e.pinned and e.key not in places]
    shapes = {row[0]: shape_row_of(row) for row in kept_rows}
    items = entry_shapes(chosen, shapes)
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
