"""A gardening pass: detect, then reconcile the findings with the stored proposals.

Idempotent: a finding is identified by its fingerprint (kind, scope, evidence versions and
their roles), and the open proposal with that fingerprint is kept, not written again
(proposal_one_open_per_evidence holds even against two passes at once). An open proposal
the pass no longer finds, or finds with other evidence (a memory superseded, invalidated,
forgotten, already promoted), is closed as obsolete; the new evidence is a new proposal.
A dismissed proposal does not come back unless its evidence grows: a finding whose
versions all lie in a dismissed proposal of the same kind and scope is suppressed.

`--scope S` covers what an administrator of S reads (S, the scopes below it and the actors
whose chain holds it): the proposals whose decision is taken at one of those scopes.
"""

import hashlib
import time
from collections import Counter
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from memory_core.db.locks import advisory_xact_lock
from memory_core.garden import detect
from memory_core.garden.detect import Finding, Window
from memory_core.models import (
    Proposal,
    ProposalEvidence,
    ProposalKind,
    ProposalState,
    Scope,
    ScopeHealth,
)
from memory_core.recall import providers
from memory_core.rules.ids import proposal_id as new_proposal_uid

STEPS = ("promote", "merge", "stale", "shadowed", "proposals", "health")

# Everything a grant on one scope reaches (permissions._READABLE_SQL for one scope).
_REACH_SQL = """
WITH RECURSIVE below(id) AS (
    SELECT %(scope)s::bigint
    UNION
    SELECT s.id FROM memory_core_scope s JOIN below b ON s.parent_id = b.id
)
SELECT id FROM below
UNION
SELECT a.scope_id FROM memory_core_membership m JOIN memory_core_actor a ON a.id = m.actor_id
WHERE m.scope_id = %(scope)s
"""


@dataclass
class PassReport:
    dry_run: bool
    memories: int = 0  # live memories the pass looked at
    found: Counter = field(default_factory=Counter)
    created: Counter = field(default_factory=Counter)
    kept: Counter = field(default_factory=Counter)
    obsoleted: Counter = field(default_factory=Counter)
    suppressed: Counter = field(default_factory=Counter)
    never_shown: int = 0
    omitting_turns: int = 0
    seconds: float = 0.0

    @property
    def open_proposals(self) -> int:
        return sum(self.created.values()) + sum(self.kept.values())


def fingerprint(finding: Finding) -> str:
    evidence = ",".join(f"{memory_id}:{role}" for memory_id, role in sorted(finding.evidence))
    text = f"{finding.kind}|{finding.scope_id}|{evidence}"
    return hashlib.sha256(text.encode()).hexdigest()


def reach_of(scope: Scope) -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute(_REACH_SQL, {"scope": scope.id})
        return sorted(row[0] for row in cursor.fetchall())


def _embedder():
    """The configured embedder, for the semantic half; None when none is configured."""
    return providers.current()


def detect_all(window: Window, progress=None) -> list[Finding]:
    embedder = _embedder()
    findings = []
    for run in (
        lambda: detect.promotions(window, embedder),
        lambda: detect.merges(window, embedder),
        lambda: detect.stale(window),
        lambda: detect.shadowed(window),
    ):
        findings += run()
        if progress is not None:
            progress(1)
    return findings


def run_pass(*, scope: Scope | None = None, dry_run: bool = False, progress=None, now=None):
    """Run one pass over everything (or what `scope` reaches); return what it did."""
    started = time.perf_counter()
    now = now or timezone.now()
    window = Window(
        now=now,
        days=settings.GARDEN_STALE_DAYS,
        min_actors=settings.GARDEN_MIN_ACTORS,
        scope_ids=reach_of(scope) if scope is not None else None,
    )
    report = PassReport(dry_run=dry_run)
    with transaction.atomic():
        # One pass at a time: two would each see the other's proposals as missing.
        advisory_xact_lock("garden", "pass")
        detect.prepare(window)
        findings = detect_all(window, progress)
        for finding in findings:
            report.found[finding.kind] += 1
        _reconcile(findings, window, report, now, dry_run)
        if progress is not None:
            progress(1)
        measured = detect.health(window)
        if not dry_run:
            _store_health(measured, window, now)
        if progress is not None:
            progress(1)
    report.memories = sum(row["live"] for row in measured.values())
    report.never_shown = sum(row["never_shown"] for row in measured.values())
    report.omitting_turns = sum(row["omitting_turns"] for row in measured.values())
    report.seconds = time.perf_counter() - started
    return report


def _in_window(rows, window: Window):
    return rows if window.scope_ids is None else rows.filter(scope_id__in=window.scope_ids)


def _reconcile(findings, window: Window, report: PassReport, now, dry_run: bool) -> None:
    wanted = {(f.kind, f.scope_id, fingerprint(f)): f for f in findings}
    open_rows = _in_window(Proposal.objects.filter(state=ProposalState.OPEN), window)
    still, gone = [], []
    for pk, kind, scope_id, print_ in open_rows.values_list(
        "pk", "kind", "scope_id", "fingerprint"
    ):
        if wanted.pop((kind, scope_id, print_), None) is not None:
            still.append(pk)
            report.kept[kind] += 1
        else:
            gone.append(pk)
            report.obsoleted[kind] += 1
    dismissed = _dismissed_sets({(k, s) for k, s, _ in wanted})
    new = []
    for (kind, scope_id, print_), finding in wanted.items():
        ids = {memory_id for memory_id, _ in finding.evidence}
        if any(ids <= old for old in dismissed.get((kind, scope_id), ())):
            report.suppressed[kind] += 1
            continue
        report.created[kind] += 1
        new.append((print_, finding))
    if dry_run:
        return
    Proposal.objects.filter(pk__in=still).update(seen_at=now)
    Proposal.objects.filter(pk__in=gone, state=ProposalState.OPEN).update(
        state=ProposalState.OBSOLETE, closed_at=now
    )
    _insert(new, now)


def _dismissed_sets(pairs) -> dict[tuple[str, int], list[set[int]]]:
    """{(kind, scope id): [evidence memory ids of each dismissed proposal]}."""
    if not pairs:
        return {}
    rows = ProposalEvidence.objects.filter(
        proposal__state=ProposalState.DISMISSED,
        proposal__scope_id__in={scope_id for _, scope_id in pairs},
        proposal__kind__in={kind for kind, _ in pairs},
    ).values_list("proposal_id", "proposal__kind", "proposal__scope_id", "memory_id")
    sets: dict[int, set[int]] = {}
    owner: dict[int, tuple[str, int]] = {}
    for proposal_id, kind, scope_id, memory_id in rows:
        sets.setdefault(proposal_id, set()).add(memory_id)
        owner[proposal_id] = (kind, scope_id)
    found: dict[tuple[str, int], list[set[int]]] = {}
    for proposal_id, ids in sets.items():
        found.setdefault(owner[proposal_id], []).append(ids)
    return found


BATCH = 2000
# One statement per batch for the proposals and one for their evidence: a first pass may
# open thousands of proposals with tens of thousands of evidence rows, and building a model
# instance for each row cost more than detecting them.
INSERT_PROPOSALS = """
    INSERT INTO memory_core_proposal
        (uid, kind, scope_id, tenant, fingerprint, state, created_at, seen_at, decided_by, note)
    SELECT uid, kind, scope_id, tenant, fingerprint, 'open', %(now)s, %(now)s, '', ''
    FROM unnest(%(uids)s::text[], %(kinds)s::text[], %(scopes)s::bigint[], %(tenants)s::text[],
                %(prints)s::text[]) AS t(uid, kind, scope_id, tenant, fingerprint)
    RETURNING id, uid
"""
INSERT_EVIDENCE = """
    INSERT INTO memory_core_proposalevidence (proposal_id, memory_id, role)
    SELECT * FROM unnest(%(proposals)s::bigint[], %(memories)s::bigint[], %(roles)s::text[])
"""


def _insert(new, now) -> None:
    for start in range(0, len(new), BATCH):
        chunk = new[start : start + BATCH]
        uids = [new_proposal_uid() for _ in chunk]
        with connection.cursor() as cursor:
            cursor.execute(
                INSERT_PROPOSALS,
                {
                    "now": now,
                    "uids": uids,
                    "kinds": [str(f.kind) for _, f in chunk],
                    "scopes": [f.scope_id for _, f in chunk],
                    "tenants": [f.tenant for _, f in chunk],
                    "prints": [print_ for print_, _ in chunk],
                },
            )
            ids = {uid: pk for pk, uid in cursor.fetchall()}
            rows = [
                (ids[uid], memory_id, str(role))
                for uid, (_, f) in zip(uids, chunk, strict=True)
                for memory_id, role in f.evidence
            ]
            cursor.execute(
                INSERT_EVIDENCE,
                {
                    "proposals": [r[0] for r in rows],
                    "memories": [r[1] for r in rows],
                    "roles": [r[2] for r in rows],
                },
            )


def _store_health(measured: dict[int, dict], window: Window, now) -> None:
    _in_window(ScopeHealth.objects.all(), window).delete()
    ScopeHealth.objects.bulk_create(
        [ScopeHealth(scope_id=pk, measured_at=now, **row) for pk, row in measured.items()],
        batch_size=BATCH,
    )


KINDS = [kind for kind, _ in ProposalKind.choices]
