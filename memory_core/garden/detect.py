"""What a gardening pass finds, set-wise in SQL (one statement per kind).

Each detector returns Findings: a kind, the scope where the decision is taken, the tenant,
and the evidence as (memory row id, role) pairs. Keys and texts are compared inside the
database and never come back to Python (merge and promote group by them there; what comes
back is ids).

Two texts are *lexically equivalent* when they say the same content words: the same set of
stemmed, stop-word-free lexemes of the `english` text search configuration (the one behind
search's stored tsvector), so "prefers tea in the morning" and "in the morning, prefers
tea" are one fact. A text with no content word at all falls back to its lower-cased self.
When an embedder is configured (memory_core/recall/providers.py), texts whose vectors (stored in
memory_core_embedding, made by the current embedder) have a cosine similarity of at least
GARDEN_SIMILARITY are equivalent too (`semantic_*`).

Only live agent memories at actor scopes are ever proposed for promotion, merging or
invalidation: what people stated is theirs to change.
"""

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection

from memory_core.models import EvidenceRole, ProposalKind
from memory_core.rules.promotion import promotion_scopes

SIG = (
    "coalesce(nullif(array_to_string(tsvector_to_array("
    "to_tsvector('english'::regconfig, {col})), ' '), ''), lower({col}))"
)
# Live agent memories at an actor's own scope, with their lexical form computed once per
# pass: every detector reads this temporary table (dropped at the pass's commit) instead of
# computing to_tsvector over the memory table four times.
PREPARE_SQL = f"""
CREATE TEMPORARY TABLE garden_live ON COMMIT DROP AS
SELECT m.id, m.scope_id, m.key, m.created_at, m.expires_at, a.id AS actor_id,
       {SIG.format(col="m.text")} AS sig
FROM memory_core_memory m
JOIN memory_core_actor a ON a.scope_id = m.scope_id
WHERE m.retired_at IS NULL AND (m.expires_at IS NULL OR m.expires_at > %(now)s)
  AND m.author = 'agent'
"""


def prepare(window) -> None:
    """The pass's table of live agent memories; call inside the pass's transaction."""
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS garden_live")
        cursor.execute(PREPARE_SQL, window.params)
        # Shadowed conclusions are found by (scope, key), as on the memory table.
        cursor.execute("CREATE INDEX garden_live_slot ON garden_live (scope_id, key)")
        cursor.execute("ANALYZE garden_live")


@dataclass
class Finding:
    kind: str
    scope_id: int
    tenant: str
    evidence: list[tuple[int, str]] = field(default_factory=list)  # (memory id, role)


@dataclass(frozen=True)
class Window:
    now: datetime
    days: int
    min_actors: int
    scope_ids: list[int] | None  # None: every scope

    @property
    def params(self) -> dict:
        return {
            "now": self.now,
            "since": self.now - timedelta(days=self.days),
            "until": self.now + timedelta(days=self.days),
            "n": self.min_actors,
            "all": self.scope_ids is None,
            "scopes": self.scope_ids or [],
        }


def _rows(sql: str, params: dict) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _grouped(rows, kind: str, role: str) -> list[Finding]:
    found: dict[int, Finding] = {}
    for scope_id, tenant, group, memory_id in rows:
        finding = found.setdefault(group, Finding(kind, scope_id, tenant))
        finding.evidence.append((memory_id, role))
    return list(found.values())


# --- 1. promote: the same key, equivalent text, at >= N actors sharing a team or tenant ---

# Which scope a group of copies is proposed at is rules.promotion's: the narrowest team or
# tenant all its actors hold, so that a team's members are not also proposed at their
# tenant (one proposal per piece of evidence). The statements below only gather, per group
# of copies, each copy beside every team and tenant in its actor's chain (narrowest first)
# and whether that scope already holds the fact (the same key with an equivalent text,
# live). A group lies in one tenant (the actors' own), is held by >= N actors, and has an
# actor with a membership among the pass's scopes; which of its placements fall among
# them is decided in Python (a pass over one team must not propose at the team what the
# whole pass proposes at the tenant).
LIVE_BY_TENANT = """
    SELECT l.id, l.key, l.sig, l.actor_id, coalesce(memory_core_tenant_of(s.token), '') AS tenant
    FROM garden_live l JOIN memory_core_scope s ON s.id = l.scope_id
"""
IN_WINDOW = """
    (%(all)s OR bool_or(EXISTS (
        SELECT 1 FROM memory_core_membership w
        WHERE w.actor_id = {col} AND w.scope_id = ANY(%(scopes)s)
    )))
"""
# Each group's copies beside their actors' teams and tenants; `{sig}` is the form the
# target must already hold for the group to be published there.
PLACED = f"""
SELECT g.grp, c.id, c.actor_id, ms.scope_id, coalesce(memory_core_tenant_of(s.token), ''),
       EXISTS (
           SELECT 1 FROM memory_core_memory w
           WHERE w.scope_id = ms.scope_id AND w.key = c.key AND w.retired_at IS NULL
             AND (w.expires_at IS NULL OR w.expires_at > %(now)s)
             AND {SIG.format(col="w.text")} = {{sig}}
       )
FROM groups g
JOIN {{copies}} c USING ({{group_by}})
JOIN memory_core_membership ms ON ms.actor_id = c.actor_id
JOIN memory_core_scope s ON s.id = ms.scope_id
WHERE s.token LIKE 'team:%%' OR s.token LIKE 'tenant:%%'
ORDER BY g.grp, c.id, ms.rank
"""

PROMOTE_SQL = f"""
WITH live AS MATERIALIZED ({LIVE_BY_TENANT}),
groups AS (
    SELECT tenant, key, sig, dense_rank() OVER (ORDER BY tenant, key, sig) AS grp
    FROM live
    GROUP BY tenant, key, sig
    HAVING count(DISTINCT actor_id) >= %(n)s AND {IN_WINDOW.format(col="live.actor_id")}
)
{PLACED.format(sig="c.sig", copies="live", group_by="tenant, key, sig")}
"""

# Semantic promotion: (tenant, key) groups held by >= N actors whose texts are not
# lexically one: each copy joins the group's most held lexical form when their vectors are
# close enough.
SEMANTIC_PROMOTE_SQL = f"""
WITH live AS MATERIALIZED ({LIVE_BY_TENANT}),
keyed AS (
    SELECT tenant, key FROM live GROUP BY tenant, key
    HAVING count(DISTINCT actor_id) >= %(n)s
       AND count(DISTINCT sig) > 1
       AND {IN_WINDOW.format(col="live.actor_id")}
),
forms AS (
    SELECT c.tenant, c.key, c.sig, count(DISTINCT c.actor_id) AS actors, min(c.id) AS rep
    FROM live c JOIN keyed USING (tenant, key)
    GROUP BY c.tenant, c.key, c.sig
),
anchor AS MATERIALIZED (
    -- Each group's most held form, with its vector read once (not once per copy).
    SELECT an.tenant, an.key, an.sig, e.vector
    FROM (
        SELECT DISTINCT ON (tenant, key) tenant, key, sig, rep FROM forms
        ORDER BY tenant, key, actors DESC, sig
    ) an
    JOIN memory_core_embedding e ON e.memory_id = an.rep
    WHERE e.embedder = %(embedder)s AND e.dims = %(dims)s
),
joined AS MATERIALIZED (
    SELECT c.tenant, c.key, c.id, c.actor_id, an.sig AS anchor_sig
    FROM live c
    JOIN anchor an USING (tenant, key)
    LEFT JOIN memory_core_embedding ep
        ON ep.memory_id = c.id AND ep.embedder = %(embedder)s AND ep.dims = %(dims)s
    WHERE c.sig = an.sig OR 1 - (an.vector <=> ep.vector) >= %(similarity)s
),
groups AS (
    SELECT tenant, key, dense_rank() OVER (ORDER BY tenant, key) AS grp
    FROM joined GROUP BY tenant, key
    HAVING count(DISTINCT actor_id) >= %(n)s
)
{PLACED.format(sig="c.anchor_sig", copies="joined", group_by="tenant, key")}
"""


def promotions(window: Window, embedder=None) -> list[Finding]:
    """One finding per group of copies (per part of it, when its actors share no scope), at
    the narrowest team or tenant its actors share (rules.promotion). A copy that a semantic
    group takes is left out of its lexical group: no copy is in two proposals."""
    params = window.params
    taken: set[int] = set()
    found: list[Finding] = []
    if embedder is not None:
        semantic = {
            **params,
            "embedder": embedder.identity,
            "dims": embedder.dims,
            "similarity": _similarity(),
        }
        found += _placed(_rows(SEMANTIC_PROMOTE_SQL, semantic), window, taken)
    found += _placed(_rows(PROMOTE_SQL, params), window, taken)
    if window.scope_ids is None:
        return found
    inside = set(window.scope_ids)
    return [f for f in found if f.scope_id in inside]


def _placed(rows, window: Window, taken: set[int]) -> list[Finding]:
    """Findings from PLACED rows; the copies they hold are added to `taken`, and copies
    already in `taken` are left out."""
    chains: dict[int, dict[int, list[int]]] = {}  # group -> actor -> teams and tenants
    copy_of: dict[tuple[int, int], int] = {}  # (group, actor) -> memory id
    tenants: dict[int, str] = {}
    published: set[tuple[int, int]] = set()  # (group, scope) already holding the fact
    for group, memory_id, actor_id, scope_id, tenant, holds in rows:
        copy_of[(group, actor_id)] = memory_id
        if memory_id not in taken:
            chains.setdefault(group, {}).setdefault(actor_id, []).append(scope_id)
        tenants[scope_id] = tenant
        if holds:
            published.add((group, scope_id))
    found = []
    for group, held in chains.items():
        for placement in promotion_scopes(held, window.min_actors):
            ids = sorted(copy_of[(group, actor)] for actor in placement.people)
            taken.update(ids)
            if (group, placement.scope) in published:
                continue  # already stated there: nothing to propose
            evidence = [(memory_id, EvidenceRole.COPY) for memory_id in ids]
            found.append(
                Finding(ProposalKind.PROMOTE, placement.scope, tenants[placement.scope], evidence)
            )
    return found


def _similarity() -> float:
    return float(settings.GARDEN_SIMILARITY)


# --- 2. merge: different keys, equivalent texts, in one actor's scope ----------------------

MERGE_SQL = """
WITH c AS (
    SELECT l.id, l.scope_id, l.created_at, l.sig FROM garden_live l
    WHERE (%(all)s OR l.scope_id = ANY(%(scopes)s))
)
SELECT c.scope_id, coalesce(memory_core_tenant_of(s.token), ''),
       array_agg(c.id ORDER BY c.created_at DESC, c.id DESC)
FROM c JOIN memory_core_scope s ON s.id = c.scope_id
GROUP BY c.scope_id, s.token, c.sig
HAVING count(*) > 1
"""

# Pairs of one actor's live agent memories (different keys: one live row per key) whose
# vectors are close; grouped with the lexical ones in Python (connected components). Each
# memory's vector is read once (not once per pair), for a batch of actor scopes at a time
# so that the vectors held stay small at any size.
SEMANTIC_MERGE_SQL = """
WITH c AS MATERIALIZED (
    SELECT l.id, l.scope_id, e.vector
    FROM garden_live l JOIN memory_core_embedding e ON e.memory_id = l.id
    WHERE l.scope_id = ANY(%(batch)s) AND e.embedder = %(embedder)s AND e.dims = %(dims)s
)
SELECT a.scope_id, a.id, b.id
FROM c a JOIN c b ON b.scope_id = a.scope_id AND b.id > a.id
WHERE 1 - (a.vector <=> b.vector) >= %(similarity)s
"""
ACTOR_SCOPES_SQL = """
SELECT DISTINCT scope_id FROM garden_live
WHERE (%(all)s OR scope_id = ANY(%(scopes)s)) ORDER BY scope_id
"""
SCOPE_BATCH = 250


def _semantic_pairs(window: Window, embedder) -> list[tuple]:
    params = {
        **window.params,
        "embedder": embedder.identity,
        "dims": embedder.dims,
        "similarity": _similarity(),
    }
    scope_ids = [row[0] for row in _rows(ACTOR_SCOPES_SQL, params)]
    pairs = []
    for start in range(0, len(scope_ids), SCOPE_BATCH):
        batch = scope_ids[start : start + SCOPE_BATCH]
        pairs += _rows(SEMANTIC_MERGE_SQL, {**params, "batch": batch})
    return pairs


def merges(window: Window, embedder=None) -> list[Finding]:
    """One finding per group of equivalent memories in an actor's scope: the newest is kept,
    the others would be invalidated."""
    groups: dict[int, list[list[int]]] = {}
    tenants: dict[int, str] = {}
    for scope_id, tenant, ids in _rows(MERGE_SQL, window.params):
        groups.setdefault(scope_id, []).append(list(ids))
        tenants[scope_id] = tenant
    if embedder is not None:
        pairs = _semantic_pairs(window, embedder)
        if pairs:
            groups, tenants = _join_pairs(groups, tenants, pairs)
    findings = []
    for scope_id, components in groups.items():
        for ids in components:
            keep, *drop = sorted(ids, reverse=True)  # ids grow with time: newest first
            evidence = [(keep, EvidenceRole.KEEP)] + [(d, EvidenceRole.DROP) for d in drop]
            findings.append(Finding(ProposalKind.MERGE, scope_id, tenants[scope_id], evidence))
    return findings


def _join_pairs(groups, tenants, pairs):
    """Connected components over the lexical groups and the semantic pairs."""
    parent: dict[int, int] = {}

    def find(x):
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a, b):
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    scope_of: dict[int, int] = {}
    for scope_id, components in groups.items():
        for ids in components:
            for memory_id in ids:
                scope_of[memory_id] = scope_id
                union(ids[0], memory_id)
    missing = {scope_id for scope_id, _, _ in pairs if scope_id not in tenants}
    if missing:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT id, coalesce(memory_core_tenant_of(token), '') FROM memory_core_scope"
                " WHERE id = ANY(%s)",
                [sorted(missing)],
            )
            tenants = {**tenants, **dict(cursor.fetchall())}
    for scope_id, a, b in pairs:
        scope_of[a] = scope_of[b] = scope_id
        union(a, b)
    components: dict[int, list[int]] = {}
    for memory_id in scope_of:
        components.setdefault(find(memory_id), []).append(memory_id)
    joined: dict[int, list[list[int]]] = {}
    for ids in components.values():
        if len(ids) > 1:
            joined.setdefault(scope_of[ids[0]], []).append(ids)
    return joined, tenants


# --- 3. stale: not shown by any turn for D days, or expiring within D days ----------------

STALE_SQL = """
WITH shown AS MATERIALIZED (
    -- Every memory version a turn of the last D days showed (digest_recent_idx).
    SELECT DISTINCT dl.memory_id
    FROM memory_core_digest d JOIN memory_core_digestline dl ON dl.digest_id = d.id
    WHERE d.created_at >= %(since)s AND dl.memory_id IS NOT NULL
)
SELECT l.scope_id, coalesce(memory_core_tenant_of(s.token), ''), l.scope_id, l.id
FROM garden_live l
JOIN memory_core_scope s ON s.id = l.scope_id
WHERE (%(all)s OR l.scope_id = ANY(%(scopes)s))
  AND (
      (l.created_at < %(since)s AND NOT EXISTS (SELECT 1 FROM shown WHERE shown.memory_id = l.id))
      OR l.expires_at <= %(until)s
  )
ORDER BY l.scope_id, l.id
"""


def stale(window: Window) -> list[Finding]:
    """One finding per actor scope: its memories to invalidate."""
    return _grouped(_rows(STALE_SQL, window.params), ProposalKind.STALE, EvidenceRole.STALE)


# --- 4. shadowed: a person's wide value beaten by agent conclusions for >= N actors --------

SHADOWED_SQL = f"""
WITH wide AS MATERIALIZED (
    SELECT w.id, w.scope_id, w.key, {SIG.format(col="w.text")} AS sig
    FROM memory_core_memory w JOIN memory_core_scope s ON s.id = w.scope_id
    WHERE w.retired_at IS NULL AND (w.expires_at IS NULL OR w.expires_at > %(now)s)
      AND w.author = 'human' AND s.token NOT LIKE 'actor:%%'
      AND (%(all)s OR w.scope_id = ANY(%(scopes)s))
),
reach AS (
    -- Whose chain holds a scope: its members, and every actor for `global`.
    SELECT ms.actor_id, ms.scope_id FROM memory_core_membership ms
    UNION ALL
    SELECT a.id, g.id FROM memory_core_actor a CROSS JOIN memory_core_scope g
    WHERE g.token = 'global'
),
beaten AS (
    SELECT w.id AS wide_id, w.scope_id, coalesce(memory_core_tenant_of(own.token), '') AS tenant,
           c.id AS conclusion_id, a.id AS actor_id
    FROM wide w
    JOIN reach r ON r.scope_id = w.scope_id
    JOIN memory_core_actor a ON a.id = r.actor_id
    JOIN memory_core_scope own ON own.id = a.scope_id
    JOIN garden_live c ON c.scope_id = a.scope_id AND c.key = w.key
    WHERE c.sig <> w.sig
),
counted AS (
    SELECT b.*, count(*) OVER (PARTITION BY b.wide_id, b.tenant) AS actors FROM beaten b
)
SELECT scope_id, tenant, wide_id, conclusion_id FROM counted
WHERE actors >= %(n)s
ORDER BY wide_id, tenant, conclusion_id
"""


def shadowed(window: Window) -> list[Finding]:
    """One finding per (person's value, tenant): a value at `global` is beaten in each
    tenant separately, and a proposal never spans tenants."""
    found: dict[tuple[int, str], Finding] = {}
    for scope_id, tenant, wide_id, conclusion_id in _rows(SHADOWED_SQL, window.params):
        finding = found.get((wide_id, tenant))
        if finding is None:
            wide = [(wide_id, EvidenceRole.WIDE)]
            finding = Finding(ProposalKind.SHADOWED, scope_id, tenant, wide)
            found[(wide_id, tenant)] = finding
        finding.evidence.append((conclusion_id, EvidenceRole.CONCLUSION))
    return list(found.values())


# --- 5. health: never-shown memories per scope, budget pressure per actor ------------------

NEVER_SHOWN_SQL = """
SELECT m.scope_id, count(*) AS live,
       -- By the line's memory_uid (digestline_memory_uid_idx): its memory_id has no index.
       count(*) FILTER (WHERE NOT EXISTS (
           SELECT 1 FROM memory_core_digestline dl WHERE dl.memory_uid = m.uid
       )) AS never_shown
FROM memory_core_memory m
WHERE m.retired_at IS NULL AND (m.expires_at IS NULL OR m.expires_at > %(now)s)
  AND (%(all)s OR m.scope_id = ANY(%(scopes)s))
GROUP BY m.scope_id
"""

PRESSURE_SQL = """
SELECT a.scope_id, count(*) AS turns,
       count(*) FILTER (WHERE coalesce((d.stats->>'omitted')::int, 0) > 0
                           OR d.pinned_omitted > 0) AS omitting,
       coalesce(sum(coalesce((d.stats->>'omitted')::int, 0)), 0) AS omitted,
       coalesce(sum(d.pinned_omitted), 0) AS pinned_omitted
FROM memory_core_digest d JOIN memory_core_actor a ON a.id = d.actor_id
WHERE d.created_at >= %(since)s AND (%(all)s OR a.scope_id = ANY(%(scopes)s))
GROUP BY a.scope_id
"""


def health(window: Window) -> dict[int, dict]:
    """{scope id: counts} for every scope with a live memory or a recent turn."""
    found: dict[int, dict] = {}
    blank = {
        "live": 0,
        "never_shown": 0,
        "turns": 0,
        "omitting_turns": 0,
        "omitted": 0,
        "pinned_omitted": 0,
    }
    for scope_id, live, never_shown in _rows(NEVER_SHOWN_SQL, window.params):
        found[scope_id] = {**blank, "live": live, "never_shown": never_shown}
    for scope_id, turns, omitting, omitted, pinned_omitted in _rows(PRESSURE_SQL, window.params):
        row = found.setdefault(scope_id, dict(blank))
        row.update(
            turns=turns, omitting_turns=omitting, omitted=omitted, pinned_omitted=pinned_omitted
        )
    return found
