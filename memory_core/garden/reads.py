"""Who sees which proposal: an administrator never sees evidence outside their grants.

A proposal is readable when the user reads its scope and the scope of every memory in its
evidence (permissions.readable_scope_roles); otherwise it does not exist for them (404).
Agents have no way here at all: nothing in the API or MCP reads proposals.
"""

from dataclasses import dataclass, field
from functools import reduce
from operator import or_

from django.db.models import Count, Exists, OuterRef, Q, Sum

from memory_core.accounts.permissions import readable_scope_roles
from memory_core.errors import NotFound
from memory_core.models import (
    EvidenceRole,
    Memory,
    Proposal,
    ProposalEvidence,
    ProposalKind,
    ProposalState,
    ScopeHealth,
)


def proposals_for_reader(user):
    roles = readable_scope_roles(user)
    rows = Proposal.objects.select_related("scope")
    if roles is None:  # a superuser
        return rows
    ids = list(roles)
    outside = ProposalEvidence.objects.filter(proposal=OuterRef("pk")).exclude(
        memory__scope_id__in=ids
    )
    return rows.filter(scope_id__in=ids).filter(~Exists(outside))


def proposal_for_reader(user, uid: str) -> Proposal:
    proposal = proposals_for_reader(user).filter(uid=uid).first()
    if proposal is None:
        raise NotFound("proposal not found")
    return proposal


@dataclass
class Landing:
    """What approving a promotion would land on: the live value at its scope for its key
    (None when there is none; approving over one needs the person's explicit choice), and
    the open proposals about the same key that say otherwise: a review of a person's value
    there or of the very copies it would publish (`shadowed`), or another promotion of a
    different text to the same place."""

    current: Memory | None = None
    rivals: list[Proposal] = field(default_factory=list)


def landings(user, proposals) -> dict[int, Landing]:
    """{proposal id: Landing} for the open promotions among `proposals` (three queries in
    all). The current value lies at the proposal's scope, which the user reads; a rival is
    listed only when the user reads it too."""
    promotions = [
        p for p in proposals if p.kind == ProposalKind.PROMOTE and p.state == ProposalState.OPEN
    ]
    if not promotions:
        return {}
    copies: dict[int, set[int]] = {}
    keys: dict[int, str] = {}
    rows = ProposalEvidence.objects.filter(proposal__in=promotions, role=EvidenceRole.COPY)
    for proposal_id, memory_id, key in rows.values_list("proposal_id", "memory_id", "memory__key"):
        copies.setdefault(proposal_id, set()).add(memory_id)
        keys[proposal_id] = key
    slots = {(p.scope_id, keys[p.pk]) for p in promotions if p.pk in keys}
    if not slots:
        return {}
    # The row a promotion would supersede (writes.lock_slot's): live, expired or not.
    live = Memory.objects.filter(retired_at=None).filter(
        reduce(or_, (Q(scope_id=scope_id, key=key) for scope_id, key in slots))
    )
    current = {(m.scope_id, m.key): m for m in live.select_related("scope", "origin_actor")}
    others = list(
        ProposalEvidence.objects.filter(
            proposal__in=proposals_for_reader(user).filter(state=ProposalState.OPEN).values("pk"),
            proposal__tenant__in={p.tenant for p in promotions},
            memory__key__in={key for _, key in slots},
        ).select_related("proposal__scope", "memory")
    )
    found = {}
    for p in promotions:
        if p.pk not in keys:
            continue
        key, mine = keys[p.pk], copies[p.pk]
        landing = Landing(current.get((p.scope_id, key)))
        for row in others:
            if row.proposal_id != p.pk and row.memory.key == key and _says_otherwise(p, mine, row):
                if row.proposal not in landing.rivals:
                    landing.rivals.append(row.proposal)
        found[p.pk] = landing
    return found


def _says_otherwise(promotion: Proposal, copies: set[int], row: ProposalEvidence) -> bool:
    other = row.proposal
    if other.kind == ProposalKind.SHADOWED:
        at_target = row.role == EvidenceRole.WIDE and row.memory.scope_id == promotion.scope_id
        return at_target or (row.role == EvidenceRole.CONCLUSION and row.memory_id in copies)
    if other.kind == ProposalKind.PROMOTE:
        return other.scope_id == promotion.scope_id or row.memory_id in copies
    return False


def open_counts(user) -> dict[str, int]:
    """{kind: open proposals the user reads}."""
    rows = (
        proposals_for_reader(user)
        .filter(state=ProposalState.OPEN)
        .values("kind")
        .annotate(n=Count("id"))
        .order_by()
    )
    return {row["kind"]: row["n"] for row in rows}


def health_for_reader(user, limit: int = 10) -> dict:
    """The last pass's health report within the user's grants: totals, and the scopes with
    the most never-shown memories and the most budget pressure."""
    roles = readable_scope_roles(user)
    rows = ScopeHealth.objects.select_related("scope")
    if roles is not None:
        rows = rows.filter(scope_id__in=list(roles))
    pressure = rows.filter(omitting_turns__gt=0).order_by(
        "-pinned_omitted", "-omitting_turns", "scope__token"
    )
    unused = rows.filter(never_shown__gt=0).order_by("-never_shown", "scope__token")
    measured = rows.order_by("-measured_at").values_list("measured_at", flat=True).first()
    names = ("live", "never_shown", "turns", "omitting_turns", "pinned_omitted")
    summed = rows.aggregate(**{name: Sum(name) for name in names})
    totals = {name: summed[name] or 0 for name in names}
    return {
        "measured_at": measured,
        "totals": totals,
        "pressure": list(pressure[:limit]),
        "unused": list(unused[:limit]),
    }
