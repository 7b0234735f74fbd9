"""What the bulk pages read: a bulk's record as the user may see it (`/memories/bulk/<id>/`),
its members as they are now, and its undo as this user would run it.

A bulk is read from its record (memory_core.bulk.recorded) and shown member by member to
whoever reads the member's scope; the person who ran it also sees the ids that named no
memory. A bulk with nothing the user may see, and an unknown bulk id, are the same 404.
"""

from dataclasses import dataclass

from memory_console.console.common.access import (
    audit_reach,
    ledger_events_for_reader,
    not_found,
    readable_scope_roles,
)
from memory_core import bulk
from memory_core.accounts.principals import Principal
from memory_core.models import Memory, Scope
from memory_core.models.access import Role


@dataclass(frozen=True)
class Member:
    """One line of a report or an undo: the member, as it is now when it still exists and
    the user reads it, and what happened (or will happen) to it, in words."""

    uid: str
    scope: str
    memory: Memory | None
    said: str
    ok: bool


def bulk_for_reader(user, bulk_id: str, *, action: str | None = "bulk.read") -> bulk.BulkReport:
    """Bulk `bulk_id`'s record with the members the user may see, or NotFound."""
    report = bulk.recorded(bulk_id)
    own = report is not None and report.principal == Principal.for_user(user).name
    if report is not None:
        reach = audit_reach(user)
        report.outcomes = [
            o
            for o in report.outcomes
            if (o.scope and reach.reads_scope(o.scope)) or (own and not o.scope)
        ]
    if report is None or not (report.outcomes or own):
        named = bulk_id if bulk.BULK_ID_RE.fullmatch(bulk_id) else None
        raise not_found(user, action, "bulk action not found", ids={"bulk": named})
    return report


def readable_memories(user, uids) -> dict[str, Memory]:
    """{uid: memory} for the ids that name a memory the user reads."""
    rows = Memory.objects.filter(uid__in=[u for u in uids if u]).select_related("scope")
    roles = readable_scope_roles(user)
    if roles is not None:
        rows = rows.filter(scope_id__in=sorted(roles))
    return {m.uid: m for m in rows}


def members(user, report: bulk.BulkReport) -> list[Member]:
    found = readable_memories(user, [o.uid for o in report.outcomes])
    return [
        Member(o.uid, o.scope, found.get(o.uid), bulk.describe(report, o), o.done)
        for o in report.outcomes
    ]


def administers_any(user, scopes) -> bool:
    """Whether the user administers one of these scopes (tokens): who is offered an undo
    (each of its changes is still checked by its service)."""
    roles = readable_scope_roles(user)
    if roles is None:
        return True
    admin_ids = sorted(scope_id for scope_id, role in roles.items() if role == Role.ADMIN)
    tokens = sorted({token for token in scopes if token})
    if not (admin_ids and tokens):
        return False
    return Scope.objects.filter(token__in=tokens, id__in=admin_ids).exists()


def undo_steps(user, report: bulk.BulkReport) -> list[bulk.Step]:
    """Undoing `report` as far as the user may read it: a step per change its ledger events
    record, each member changed since marked with why it is left."""
    events = bulk.events_of(report, ledger_events_for_reader(user))
    return bulk.checked(bulk.undo_steps(events))


_STEP_WORDS = {
    "unpin": "unpin it",
    "pin": "pin it again",
    "reinstate": "reinstate it",
    "invalidate": "invalidate it again",
    "unrepublish": "take back its republication",
}


def step_members(user, report: bulk.BulkReport, steps: list[bulk.Step]) -> list[Member]:
    """The undo's lines, before it runs: what each step will do, or why it is left."""
    found = readable_memories(user, [s.member for s in steps] + [s.version for s in steps])
    lines = []
    for step in steps:
        if step.skip:
            outcome = bulk.Outcome(step.member, step.scope, bulk.SKIPPED, step.skip)
            said = bulk.describe(report, outcome)
        else:
            said = _STEP_WORDS[step.step]
            if step.step == "unrepublish":
                said += f" ({step.version}" + (
                    ", and bring the original back)" if step.retired_original else ")"
                )
        memory = found.get(step.member) or found.get(step.version)
        lines.append(Member(step.member, step.scope, memory, said, not step.skip))
    return lines
