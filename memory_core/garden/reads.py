"""Who sees which proposal: an administrator never sees evidence outside their grants.

A proposal is readable when the user reads its scope and the scope of every memory in its
evidence (permissions.readable_scope_roles); otherwise it does not exist for them (404).
Agents have no way here at all: nothing in the API or MCP reads proposals.
"""

from django.db.models import Count, Exists, OuterRef, Sum

from memory_core.accounts.permissions import readable_scope_roles
from memory_core.errors import NotFound
from memory_core.models import Proposal, ProposalEvidence, ProposalState, ScopeHealth


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
