"""What the garden page and the dashboard show of gardening (memory_core/garden/), for one
user: proposals with their evidence laid out, open counts per kind, the health report.

Evidence is rendered live from the memory rows (a proposal holds no text): every memory
here lies in a scope the user reads (memory_core.garden.reads hides the rest).
"""

import hashlib
from dataclasses import dataclass, field

from django.core.cache import cache
from django.db.models import Count, F, Max, Q, Window
from django.db.models.functions import RowNumber
from django.utils import timezone

from memory_console.console.access import origin_threads_for_reader
from memory_core.accounts.permissions import readable_scope_roles
from memory_core.garden.reads import health_for_reader, open_counts
from memory_core.models import Memory, Proposal, ProposalEvidence, ProposalKind, ScopeHealth
from memory_core.models.access import Role

BAR_WIDTH = 240  # the dashboard's bars, in SVG units


@dataclass
class Evidence:
    role: str
    memory: Memory
    thread: object = None  # the stored conversation that taught it, when it still resolves
    live: bool = True


@dataclass
class Card:
    proposal: Proposal
    evidence: list[Evidence] = field(default_factory=list)
    can_decide: bool = False
    # With the evidence cut to its first few (the list page), how much there is in all.
    evidence_total: int | None = None
    actor_total: int | None = None

    @property
    def evidence_count(self) -> int:
        return len(self.evidence) if self.evidence_total is None else self.evidence_total

    @property
    def actor_count(self) -> int:
        return len(self.actors) if self.actor_total is None else self.actor_total

    @property
    def actors(self) -> list:
        seen = {}
        for item in self.evidence:
            actor = item.memory.origin_actor
            if actor is not None and item.role != "wide":
                seen.setdefault(actor.ref, actor)
        return list(seen.values())

    @property
    def wide(self) -> Memory | None:
        return next((e.memory for e in self.evidence if e.role == "wide"), None)

    @property
    def first(self) -> Memory | None:
        return self.evidence[0].memory if self.evidence else None


class Deciding:
    """Whether the user administers a proposal's scope (one readable_scope_roles query)."""

    def __init__(self, user):
        self.roles = readable_scope_roles(user)

    def may(self, proposal: Proposal) -> bool:
        return self.roles is None or self.roles.get(proposal.scope_id) == Role.ADMIN

    @property
    def administers_any(self) -> bool:
        return self.roles is None or Role.ADMIN in self.roles.values()


def cards(user, proposals, deciding: Deciding | None = None, shown=None) -> list[Card]:
    """Each proposal with its evidence (one query for all evidence, one for threads).
    shown=N: only each proposal's first N pieces of evidence (and its wide value), with the
    totals counted in the database."""
    deciding = deciding or Deciding(user)
    proposals = list(proposals)
    rows = ProposalEvidence.objects.filter(proposal__in=proposals)
    totals = {}
    if shown is not None:
        totals = {
            t["proposal_id"]: t
            for t in rows.values("proposal_id").annotate(
                pieces=Count("id"),
                actors=Count("memory__origin_actor", distinct=True, filter=~Q(role="wide")),
            )
        }
        rows = rows.alias(
            place=Window(
                RowNumber(),
                partition_by=F("proposal_id"),
                order_by=(F("memory__created_at").desc(), F("memory_id").desc()),
            )
        ).filter(Q(place__lte=shown) | Q(role="wide"))
    rows = rows.select_related("memory__scope", "memory__origin_actor").order_by(
        "proposal_id", "-memory__created_at", "-memory_id"
    )
    by_proposal: dict[int, list] = {}
    for row in rows:
        by_proposal.setdefault(row.proposal_id, []).append(row)
    memories = [row.memory for group in by_proposal.values() for row in group]
    threads = origin_threads_for_reader(
        user, [(m.origin_actor_id, m.origin_thread) for m in memories]
    )
    now = timezone.now()
    found = []
    for proposal in proposals:
        card = Card(proposal, can_decide=deciding.may(proposal))
        if proposal.pk in totals:
            card.evidence_total = totals[proposal.pk]["pieces"]
            card.actor_total = totals[proposal.pk]["actors"]
        for row in by_proposal.get(proposal.pk, []):
            m = row.memory
            live = m.retired_at is None and (m.expires_at is None or m.expires_at > now)
            thread = threads.get((m.origin_actor_id, m.origin_thread))
            card.evidence.append(Evidence(row.role, m, thread, live))
        found.append(card)
    return found


def dashboard_summary(user) -> dict:
    """Open proposals per kind (with bar widths for the chart) and the health report."""
    counts = open_counts(user)
    top = max(counts.values(), default=0)
    kinds = [
        {
            "kind": kind,
            "label": label,
            "count": counts.get(kind, 0),
            "width": round(BAR_WIDTH * counts.get(kind, 0) / top) if top else 0,
            "y": 22 * n,
        }
        for n, (kind, label) in enumerate(ProposalKind.choices)
    ]
    return {
        "kinds": kinds,
        "open": sum(counts.values()),
        "health": _health(user),
        "bar_width": BAR_WIDTH,
    }


HEALTH_FIELDS = ("live", "never_shown", "turns", "omitted", "omitting_turns", "pinned_omitted")


def _health(user) -> dict:
    """health_for_reader, kept in the cache per reach and per state of the health table.

    The report changes only when a gardening pass rewrites the table, and a pass writes
    every row it measures with its own time: the latest time and the row count within the
    reach (one aggregate) name the state, so a view after a pass never gets the report of
    before it. At 1m the report's two top-10 lists sort 11,200 scopes (24 ms a view)."""
    roles = readable_scope_roles(user)
    rows = (
        ScopeHealth.objects.all()
        if roles is None
        else ScopeHealth.objects.filter(scope_id__in=list(roles))
    )
    state = rows.aggregate(at=Max("measured_at"), n=Count("scope_id"))
    if not state["n"]:
        return health_for_reader(user)
    reach = "all" if roles is None else ",".join(map(str, sorted(roles)))
    digest = hashlib.sha256(f"{reach}|{state['at'].isoformat()}|{state['n']}".encode())
    key = f"garden-health:{digest.hexdigest()}"
    report = cache.get(key)
    if report is None:
        report = _plain(health_for_reader(user))
        cache.set(key, report, timeout=86400)
    return report


def _plain(report: dict) -> dict:
    """The report with its rows as plain values (what the template reads), for the cache."""

    def row(health) -> dict:
        return {"scope": {"token": health.scope.token}} | {
            name: getattr(health, name) for name in HEALTH_FIELDS
        }

    return report | {
        "pressure": [row(h) for h in report["pressure"]],
        "unused": [row(h) for h in report["unused"]],
    }
