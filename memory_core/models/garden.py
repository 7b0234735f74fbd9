"""Gardening: what a curation pass proposes, and the per-scope health it measured.

A proposal holds its evidence as references to memory versions (ProposalEvidence), never a
copy of a key or a text: the page renders them live from the memory rows, for a viewer who
may read them. An evidence row goes with its memory (ON DELETE CASCADE, declared in the
migration, so even raw SQL cannot leave one behind), and losing one makes its proposal
obsolete at once (trigger `evidence_gone_obsoletes`): after a forget, no proposal counts
the forgotten memory or waits to act on it.
"""

import pgtrigger
from django.db import models
from django.db.models import Q

from memory_core.rules.ids import proposal_id
from memory_core.rules.scopes import SCOPE_MAX_CHARS


class ProposalKind(models.TextChoices):
    PROMOTE = "promote", "Promote what many agents learned"
    MERGE = "merge", "Merge near-duplicates"
    STALE = "stale", "Stale and unused"
    SHADOWED = "shadowed", "Shadowed people"


class ProposalState(models.TextChoices):
    OPEN = "open"
    APPROVED = "approved"
    DISMISSED = "dismissed"
    OBSOLETE = "obsolete"


class EvidenceRole(models.TextChoices):
    COPY = "copy"  # promote: one actor's copy of the fact
    KEEP = "keep"  # merge: the key kept
    DROP = "drop"  # merge: a key to invalidate
    STALE = "stale"  # stale: a memory to invalidate
    WIDE = "wide"  # shadowed: the person's value at the wide scope
    CONCLUSION = "conclusion"  # shadowed: an agent conclusion beating it


OBSOLETE_ON_EVIDENCE_GONE = """
    UPDATE memory_core_proposal
    SET state = 'obsolete', closed_at = now()
    WHERE id = OLD.proposal_id AND state = 'open';
    RETURN OLD;
"""


class Proposal(models.Model):
    uid = models.CharField(max_length=40, unique=True, default=proposal_id, editable=False)
    kind = models.CharField(max_length=16, choices=ProposalKind.choices)
    # Where the decision is taken: the team or tenant to publish at (promote), the actor's
    # own scope (merge, stale), the scope of the person's value (shadowed).
    scope = models.ForeignKey(
        "memory_core.Scope", on_delete=models.PROTECT, related_name="proposals"
    )
    # The one tenant every evidence memory lies in ("" outside every tenant): a proposal
    # never spans tenants, even about a value at `global`.
    tenant = models.CharField(max_length=SCOPE_MAX_CHARS, blank=True, default="")
    # sha256 over the kind, the scope and the evidence (version ids and roles): the same
    # evidence is the same proposal, pass after pass.
    fingerprint = models.CharField(max_length=64)
    state = models.CharField(
        max_length=12, choices=ProposalState.choices, default=ProposalState.OPEN
    )
    created_at = models.DateTimeField(auto_now_add=True)
    seen_at = models.DateTimeField()  # the last pass that found this evidence
    closed_at = models.DateTimeField(null=True, blank=True)  # approved, dismissed, obsolete
    decided_by = models.CharField(max_length=200, blank=True, default="")
    # A dismissal's reason (one line); the ledger records only its length.
    note = models.CharField(max_length=500, blank=True, default="")

    class Meta:
        ordering = ["kind", "-created_at", "-id"]
        constraints = [
            # Idempotent passes: one open proposal per evidence, however often the pass runs
            # or however many run at once (the insert is ON CONFLICT DO NOTHING).
            models.UniqueConstraint(
                fields=["kind", "scope", "fingerprint"],
                condition=Q(state="open"),
                name="proposal_one_open_per_evidence",
            ),
            # A person's decision names the person; an open proposal names nobody.
            models.CheckConstraint(
                condition=Q(state__in=["open", "obsolete"])
                | Q(state__in=["approved", "dismissed"], closed_at__isnull=False)
                & ~Q(decided_by=""),
                name="proposal_decision_named",
            ),
            models.CheckConstraint(
                condition=~Q(state="dismissed") | ~Q(note=""),
                name="proposal_dismissal_has_reason",
            ),
        ]
        indexes = [
            # The garden page and the dashboard: open proposals by kind, newest first (the
            # id too: the page orders by it after the time, and without it the planner sorted
            # every open proposal of the kind, 15 ms at 1m, for a page of five).
            models.Index(
                fields=["kind", "-created_at", "-id"],
                condition=Q(state="open"),
                name="proposal_open_kind_idx",
            ),
            # A pass compares its findings with the proposals of the scopes it covers.
            models.Index(fields=["scope", "kind", "state"], name="proposal_scope_kind_idx"),
        ]

    def __str__(self):
        return self.uid


class ProposalEvidence(models.Model):
    proposal = models.ForeignKey(Proposal, on_delete=models.CASCADE, related_name="evidence")
    # The foreign key is declared by migration 0013 with ON DELETE CASCADE (as Embedding's):
    # a forget deletes the evidence row with the memory, whatever deletes the memory.
    memory = models.ForeignKey(
        "memory_core.Memory",
        on_delete=models.CASCADE,
        related_name="proposal_evidence",
        db_constraint=False,
    )
    role = models.CharField(max_length=12, choices=EvidenceRole.choices)

    class Meta:
        ordering = ["proposal", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["proposal", "memory"], name="evidence_one_row_per_memory"
            ),
        ]
        triggers = [
            # A memory gone (forgotten) leaves no open proposal counting it or acting on it.
            pgtrigger.Trigger(
                name="evidence_gone_obsoletes",
                when=pgtrigger.After,
                operation=pgtrigger.Delete,
                func=OBSOLETE_ON_EVIDENCE_GONE,
            ),
        ]


class ScopeHealth(models.Model):
    """What the last pass measured at one scope: memories no turn ever showed, and the
    budget pressure of an actor's turns (digests' `omitted`, `pinned_omitted`) over the
    last GARDEN_STALE_DAYS days. A report, not a proposal: counts only."""

    scope = models.OneToOneField(
        "memory_core.Scope", on_delete=models.CASCADE, primary_key=True, related_name="health"
    )
    live = models.PositiveIntegerField(default=0)
    never_shown = models.PositiveIntegerField(default=0)
    turns = models.PositiveIntegerField(default=0)
    omitting_turns = models.PositiveIntegerField(default=0)
    omitted = models.PositiveBigIntegerField(default=0)
    pinned_omitted = models.PositiveBigIntegerField(default=0)
    measured_at = models.DateTimeField()
