"""People decide: approve a proposal (through the ordinary services) or dismiss it.

Approval runs, inside one audited change, the services a person would have run by hand:
writes.promote for a promotion, curation.invalidate for what goes, writes.correct for a
shadowed person's value. Each of those leaves its own ledger event and access-log row,
tagged `proposal: <uid>` (changes.for_proposal); the approval's own event,
`proposal.approved`, names the proposal and the versions it acted on. All of it commits
together or not at all: one refusal (a copy the person does not administer, a version
corrected meanwhile) leaves nothing done.

A proposal whose evidence changed since the pass (a version no longer live) is not acted
on: it is closed as obsolete, and the person is told so.

A promotion never replaces a value by default. When its scope already holds a live value
for the key (a person's policy, say), approving it is refused unless the person names that
very version as the one to replace (`replace`): a plain approval, a bulk approval, or one
whose chosen version has changed since it was shown, changes nothing. Replaced, the value
is superseded, and its tags stay on the new version (with the copy's): a tag such as
`finance` is how people find their policies, and the agents' copy never had it.
"""

from dataclasses import dataclass, field

from django.conf import settings
from django.utils import timezone

from memory_core import curation, writes
from memory_core.accounts.permissions import can_administer
from memory_core.changes import audited, for_proposal, in_bulk
from memory_core.errors import DomainError, Forbidden, Invalid, NotFound
from memory_core.models import (
    Author,
    EvidenceRole,
    Memory,
    Proposal,
    ProposalKind,
    ProposalState,
)
from memory_core.rules.ids import new_id
from memory_core.rules.promotion import promoted_tags

MAX_BATCH = 200
RESOLUTIONS = ("invalidate", "correct")  # what approving a shadowed-person proposal does


@dataclass
class Decided:
    proposal: Proposal
    state: str  # approved, dismissed, or obsolete (the evidence had changed)
    created: list[Memory] = field(default_factory=list)
    retired: list[Memory] = field(default_factory=list)
    replaced: Memory | None = None  # a promotion's: the value it superseded at its scope


@dataclass(frozen=True)
class Choices:
    """What the person chose beside "approve" (approve()'s arguments)."""

    retire_copies: bool = False
    resolution: str = "invalidate"
    text: str = ""
    replace: str = ""


def _check_decider(principal, proposal: Proposal) -> None:
    if not principal.is_human or not can_administer(principal, proposal.scope):
        raise Forbidden(f"deciding this proposal needs an administrator of {proposal.scope.token}")


def _lock_open(proposal: Proposal) -> Proposal:
    locked = (
        Proposal.objects.select_for_update(of=("self",))
        .select_related("scope")
        .filter(pk=proposal.pk)
        .first()
    )
    if locked is None:
        raise NotFound("proposal not found")
    if locked.state != ProposalState.OPEN:
        raise Invalid(f"this proposal is already {locked.state}; nothing was changed")
    return locked


def evidence_of(proposal: Proposal) -> list[tuple[str, Memory]]:
    rows = proposal.evidence.select_related("memory__scope", "memory__origin_actor").order_by(
        "-memory__created_at", "-memory_id"
    )
    return [(row.role, row.memory) for row in rows]


def _is_live(memory: Memory, now) -> bool:
    return memory.retired_at is None and (memory.expires_at is None or memory.expires_at > now)


def _close(proposal: Proposal, state: str, principal, note: str = "") -> None:
    proposal.state = state
    proposal.closed_at = timezone.now()
    if state != ProposalState.OBSOLETE:
        proposal.decided_by = principal.name
    proposal.note = note
    proposal.save(update_fields=["state", "closed_at", "decided_by", "note"])


def approve(
    proposal: Proposal,
    *,
    principal,
    retire_copies: bool = False,
    resolution: str = "invalidate",
    text: str = "",
    replace: str = "",
) -> Decided:
    """Approve `proposal`. `retire_copies`: a promotion also retires the actors' copies;
    `replace`: the id of the live value at a promotion's scope that the person chose to
    replace (refused when the scope holds one and this does not name it);
    `resolution`/`text`: a shadowed person's value is corrected to `text` ("correct") or
    the agent conclusions beating it are invalidated ("invalidate")."""
    with audited(principal, "proposal.approve", scope=proposal.scope.token) as change:
        _check_decider(principal, proposal)
        locked = _lock_open(proposal)
        evidence = evidence_of(locked)
        ids = [m.uid for _, m in evidence]
        now = timezone.now()
        if not evidence or not all(_is_live(m, now) for _, m in evidence):
            _close(locked, ProposalState.OBSOLETE, principal)
            change.log(409, memory_ids=ids, count=len(ids), detail={"proposal": locked.uid})
            return Decided(locked, ProposalState.OBSOLETE)
        decided = Decided(locked, ProposalState.APPROVED)
        choices = Choices(retire_copies, resolution, text, replace)
        with for_proposal(locked.uid):
            _carry_out(locked, evidence, decided, principal, choices)
        _close(locked, ProposalState.APPROVED, principal)
        payload = {
            "proposal": locked.uid,
            "proposal_kind": locked.kind,
            "memories": ids,
            "count": len(ids),
            "created": [m.uid for m in decided.created],
            "retired": [m.uid for m in decided.retired],
        }
        if locked.kind == ProposalKind.PROMOTE:
            payload["supersedes"] = decided.replaced.uid if decided.replaced else None
        change.event("proposal.approved", locked.scope, payload)
        change.log(200, memory_ids=ids, count=len(ids), detail={"proposal": locked.uid})
    return decided


def _value_to_replace(proposal: Proposal, copy: Memory, replace: str) -> Memory | None:
    """The live value at the promotion's scope, under its slot's lock (taken in promote's
    order, the copy's slot first), when the person chose to replace exactly that version;
    None when there is none. Anything else is refused: nothing is replaced by default."""
    writes.lock_slot(copy.scope, copy.key)
    current = writes.lock_slot(proposal.scope, copy.key)
    target = proposal.scope.token
    if current is None and replace:
        raise Invalid(
            f"the value you chose to replace at {target} is no longer live; nothing was "
            "changed: review the proposal again",
            reason="target_changed",
        )
    if current is not None and not replace:
        who = "a person" if current.author == Author.HUMAN else "an agent"
        raise Invalid(
            f"{target} already holds a value for this key ({current.uid}, stated by {who}); "
            "approving would replace it for everyone there. Nothing was changed: choose to "
            "replace the current value, or dismiss the proposal.",
            reason="target_holds_value",
        )
    if current is not None and replace != current.uid:
        raise Invalid(
            f"the value at {target} changed since you chose to replace it (it is now "
            f"{current.uid}); nothing was changed: review it and choose again",
            reason="target_changed",
        )
    return current


def _promote(proposal, evidence, decided, principal, choices: Choices) -> None:
    copies = [m for role, m in evidence if role == EvidenceRole.COPY]
    chosen, others = copies[0], copies[1:]  # the newest copy is republished
    current = _value_to_replace(proposal, chosen, choices.replace)
    new = writes.promote(
        chosen,
        proposal.scope,
        principal=principal,
        retire_original=choices.retire_copies,
        tags=promoted_tags(current.tags if current else [], chosen.tags),
    )
    decided.created.append(new)
    if current is not None:
        current.refresh_from_db()
        decided.replaced = current
        decided.retired.append(current)
    if choices.retire_copies:
        decided.retired.append(chosen)
        reason = f"republished at {proposal.scope.token} as {new.uid} (proposal {proposal.uid})"
        for memory in others:
            decided.retired.append(curation.invalidate(memory, reason, principal=principal))


def _carry_out(proposal, evidence, decided, principal, choices: Choices):
    uid = proposal.uid
    resolution, text = choices.resolution, choices.text
    if proposal.kind == ProposalKind.PROMOTE:
        _promote(proposal, evidence, decided, principal, choices)
    elif proposal.kind == ProposalKind.MERGE:
        keep = next(m for role, m in evidence if role == EvidenceRole.KEEP)
        reason = f"merged into {keep.uid} (proposal {uid})"
        for role, memory in evidence:
            if role == EvidenceRole.DROP:
                decided.retired.append(curation.invalidate(memory, reason, principal=principal))
    elif proposal.kind == ProposalKind.STALE:
        days = settings.GARDEN_STALE_DAYS
        reason = f"stale: unshown for {days} days or expiring within them (proposal {uid})"
        for _, memory in evidence:
            decided.retired.append(curation.invalidate(memory, reason, principal=principal))
    else:
        wide = next(m for role, m in evidence if role == EvidenceRole.WIDE)
        if resolution not in RESOLUTIONS:
            raise Invalid("choose to correct the person's value or to invalidate the conclusions")
        if resolution == "correct":
            decided.created.append(writes.correct(wide, text.strip(), principal=principal))
            return
        reason = f"beats a person's value at {wide.scope.token} ({wide.uid}) (proposal {uid})"
        for role, memory in evidence:
            if role == EvidenceRole.CONCLUSION:
                decided.retired.append(curation.invalidate(memory, reason, principal=principal))


def dismiss(proposal: Proposal, reason: str, *, principal) -> Decided:
    """Dismiss with a reason (kept on the row; the ledger records its length only)."""
    with audited(principal, "proposal.dismiss", scope=proposal.scope.token) as change:
        _check_decider(principal, proposal)
        reason = curation.checked_reason(reason, "say why the proposal is dismissed")
        locked = _lock_open(proposal)
        ids = [m.uid for _, m in evidence_of(locked)]
        _close(locked, ProposalState.DISMISSED, principal, note=reason)
        change.event(
            "proposal.dismissed",
            locked.scope,
            {
                "proposal": locked.uid,
                "proposal_kind": locked.kind,
                "memories": ids,
                "count": len(ids),
                "reason_chars": len(reason),
            },
        )
        change.log(200, memory_ids=ids, count=len(ids), detail={"proposal": locked.uid})
    return Decided(locked, ProposalState.DISMISSED)


@dataclass(frozen=True)
class Outcome:
    uid: str
    status: int  # 200 approved, 409 obsolete, otherwise the refusal's status
    message: str


def approve_many(uids, *, principal, lookup) -> tuple[str, list[Outcome]]:
    """Approve each proposal `lookup(uid)` finds (NotFound outside the caller's grants), each
    in its own change tagged with one bulk id; one failure does not stop the others."""
    chosen = list(dict.fromkeys(u for u in uids if u))
    if not chosen:
        raise Invalid("select at least one proposal")
    if len(chosen) > MAX_BATCH:
        raise Invalid(f"at most {MAX_BATCH} proposals at once ({len(chosen)} selected)")
    bulk_id = new_id("bulk")
    outcomes = []
    with in_bulk(bulk_id):
        for uid in chosen:
            try:
                decided = approve(lookup(uid), principal=principal)
            except DomainError as error:
                text = "not found" if error.status == 404 else error.message
                outcomes.append(Outcome(uid, error.status, text))
                continue
            if decided.state == ProposalState.OBSOLETE:
                outcomes.append(Outcome(uid, 409, "obsolete: its evidence changed"))
            else:
                outcomes.append(Outcome(uid, 200, "approved"))
    return bulk_id, outcomes
