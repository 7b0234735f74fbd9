"""What the garden pages show of gardening (memory_core/garden/), for one user: proposals
with their evidence laid out, grouped by kind. (The dashboard's open counts and health
report are dashboard/reads.py's.)

Evidence is rendered live from the memory rows (a proposal holds no text): every memory
here lies in a scope the user reads (memory_core.garden.reads hides the rest).
"""

from dataclasses import dataclass, field

from django.db.models import Count, F, Q, Window
from django.db.models.functions import RowNumber
from django.utils import timezone

from memory_console.console.common.access import origin_threads_for_reader
from memory_core.accounts.permissions import readable_scope_roles
from memory_core.garden.reads import Landing, landings, proposals_for_reader
from memory_core.models import Memory, Proposal, ProposalEvidence, ProposalKind
from memory_core.models.access import Role
from memory_core.rules.promotion import promoted_tags

# Proposals shown per kind (and per page, with a kind chosen); the count says how many there
# are. A card in the list shows its first EVIDENCE_SHOWN pieces of evidence; the
# proposal's own page shows all (a promotion at 1m can name dozens of actors' versions).
PER_KIND = 10
PER_KIND_OVERVIEW = 5  # every kind at once: the newest few of each
EVIDENCE_SHOWN = 5


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
    # A promotion's: the live value at its scope for the key, and the open proposals that
    # say otherwise (memory_core.garden.reads.landings).
    landing: Landing = field(default_factory=Landing)

    @property
    def current(self) -> Memory | None:
        return self.landing.current

    @property
    def tags_if_replaced(self) -> list[str]:
        """The tags the new value would carry if it replaced the current one."""
        if self.first is None:
            return []
        return promoted_tags(self.current.tags if self.current else [], self.first.tags)

    @property
    def read_ids(self) -> list[str]:
        """The memory versions the card shows (for the access log)."""
        shown = [e.memory.uid for e in self.evidence]
        return shown + ([self.current.uid] if self.current else [])

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
    landed = landings(user, proposals)
    found = []
    for proposal in proposals:
        card = Card(proposal, can_decide=deciding.may(proposal))
        card.landing = landed.get(proposal.pk, Landing())
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


def listing(user, state: str, kind: str, page: int, deciding: Deciding):
    """The groups of the list page, one per kind (or only `kind`, at page `page`), each
    with its total, its pages and its cards; and every card shown."""
    visible = proposals_for_reader(user).filter(state=state)
    # One grouped count for every kind, a page of proposals per kind, then the evidence of
    # every card shown in one pass (cards()), not one pass per kind.
    totals = dict(
        visible.order_by().values_list("kind").annotate(n=Count("id")).values_list("kind", "n")
    )
    groups = []
    for value, label in ProposalKind.choices:
        if kind and value != kind:
            continue
        total = totals.get(value, 0)
        size = PER_KIND if kind else PER_KIND_OVERVIEW
        pages = max(1, -(-total // size))
        page = min(page, pages)
        start = (page - 1) * size
        rows = visible.filter(kind=value).order_by("-created_at", "-id")
        group = {"kind": value, "label": label, "total": total, "page": page, "pages": pages}
        group["proposals"] = list(rows[start : start + size]) if total else []
        groups.append(group)
    shown = cards(user, [p for g in groups for p in g["proposals"]], deciding, shown=EVIDENCE_SHOWN)
    by_id = {card.proposal.pk: card for card in shown}
    for group in groups:
        group["cards"] = [by_id[p.pk] for p in group.pop("proposals")]
    return groups, shown
