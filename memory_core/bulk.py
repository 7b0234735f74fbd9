"""Bulk actions: one decision applied to many memories (the console's finder and scope page),
their record, and undoing one.

A bulk action is no new kind of change: it loops the single-memory service (curation's pin,
unpin and invalidate, writes.promote, forgetting.forget, undo.reinstate), each memory in its
own audited change, so each memory's ledger event and access-log row are exactly those of
the single action, tagged with the bulk id (changes.in_bulk). One memory's refusal (403),
absence (404) or conflict (422) is written to its outcome and the loop goes on: what was done
stays done, and the report says, memory by memory, what happened.

The record. When the loop ends, one access-log row (action `bulk`) records the bulk itself:
the action and its options, and member by member its id, scope, status, a refusal's reason
code and the id of any version its change wrote — ids, scopes and codes, never a key, a text
or an invalidation's reason. The report is read back from it (`recorded`), so reloading or
bookmarking a report shows it again and runs nothing. (A worker killed mid-loop leaves each
member's own change whole, on record, without the bulk's row.)

Undo. The bulk's ledger events say what each member's change did (a pin that changed
nothing wrote none); `undo_steps` turns each into its reversal and `checked` leaves out, with
a reason, every member no longer as the bulk left it. `undo` runs the rest as a new bulk,
each member through the single-memory service again (curation, undo.reinstate,
undo.unrepublish). A forget cannot be undone, and an undo is not undone in turn.
"""

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from functools import partial

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from memory_core import curation, forgetting, undo, writes
from memory_core.changes import in_bulk
from memory_core.errors import DomainError, Invalid
from memory_core.ledger import access_log
from memory_core.models import AccessLog, Memory, RetiredReason, Scope
from memory_core.rules.ids import new_id
from memory_core.visibility import MEMORY_ID_RE

MAX_BATCH = 200
ACTIONS = ("pin", "unpin", "invalidate", "republish", "forget", "reinstate")
UNDO = "undo"
# The actions whose changes an undo reverses.
UNDOABLE = ("pin", "unpin", "invalidate", "republish", "reinstate")
# A republished memory's pin: as its original is, pinned, or not.
PIN_CHOICES = ("original", "yes", "no")
# The access-log action of a bulk's own row, its record.
RECORD_ACTION = "bulk"
BULK_ID_RE = re.compile(r"bulk_[0-9A-Z]{26}")
# The ledger events of a bulk are looked for from its start to the writing of its record,
# and this much either side (the clocks of several servers).
CLOCK_MARGIN = timedelta(minutes=5)
# The status of a member an undo left as it was, without trying.
SKIPPED = 409
# Why an undo leaves a member as it is (besides undo's CHANGED).
FORGOTTEN = "forgotten"


@dataclass(frozen=True)
class Outcome:
    uid: str  # the member's id; "" when what was sent was no memory id at all
    scope: str = ""  # its scope's token; "" when it was not found
    status: int = 200  # 200 done; otherwise the refusal's status (SKIPPED: not tried)
    reason: str = ""  # the refusal's reason code
    made: str = ""  # the version its change wrote (republish, reinstate, undo), if any
    count: int = 0  # forget: the versions erased
    step: str = ""  # undo: what undoing it does

    @property
    def done(self) -> bool:
        return self.status == 200

    def as_row(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v not in ("", 0) or k == "status"}

    @classmethod
    def from_row(cls, row: dict) -> "Outcome":
        values = {k: row[k] for k in cls.__dataclass_fields__ if k in row}
        return cls(**{"uid": "", **values})


@dataclass
class BulkReport:
    bulk_id: str
    action: str
    principal: str = ""
    started: datetime | None = None
    finished: datetime | None = None
    target: str = ""  # republish: the scope chosen
    pinned: str = ""  # republish: PIN_CHOICES
    retire_original: bool = False  # republish
    undoes: str = ""  # undo: the bulk it undoes
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def done(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.done]

    @property
    def failed(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.done]

    def detail(self) -> dict:
        options = {
            "target": self.target,
            "pinned": self.pinned,
            "retire_original": self.retire_original,
            "undoes": self.undoes,
        }
        return {
            "bulk": self.bulk_id,
            "action": self.action,
            "started": self.started.isoformat() if self.started else None,
            **{name: value for name, value in options.items() if value},
            "outcomes": [o.as_row() for o in self.outcomes],
        }


def check_batch(action: str, uids: Iterable[str]) -> list[str]:
    """The distinct ids in the order given; Invalid for an unknown action or a bad size."""
    if action not in ACTIONS:
        raise Invalid(f"unknown bulk action {action!r}")
    chosen = list(dict.fromkeys(uid for uid in uids if uid))
    if not chosen:
        raise Invalid("select at least one memory")
    if len(chosen) > MAX_BATCH:
        raise Invalid(f"at most {MAX_BATCH} memories at once ({len(chosen)} selected)")
    return chosen


def _member(uid: str, lookup: Callable[[str], Memory], act) -> Outcome:
    """`act(memory)`'s outcome for the memory `lookup(uid)` finds, or the refusal's."""
    scope = ""
    try:
        memory = lookup(uid)
        scope = memory.scope.token
        outcome = act(memory)
    except DomainError as error:
        return Outcome(
            uid if MEMORY_ID_RE.fullmatch(uid) else "", scope, error.status, error.reason
        )
    return replace(outcome, uid=uid, scope=scope)


def _one(report: BulkReport, memory: Memory, *, principal, reason: str, target) -> Outcome:
    action = report.action
    if action in ("pin", "unpin"):
        curation.set_pinned(memory, action == "pin", principal=principal)
    elif action == "invalidate":
        curation.invalidate(memory, reason, principal=principal)
    elif action == "republish":
        pinned = memory.pinned if report.pinned == "original" else report.pinned == "yes"
        new = writes.promote(
            memory,
            target,
            principal=principal,
            retire_original=report.retire_original,
            pinned=pinned,
        )
        return Outcome(memory.uid, made=new.uid)
    elif action == "reinstate":
        return Outcome(memory.uid, made=undo.reinstate(memory, principal=principal).uid)
    else:
        result = forgetting.forget(memory, principal=principal)
        return Outcome(memory.uid, count=len(result.memory_ids))
    return Outcome(memory.uid)


def run(
    action: str,
    uids: Iterable[str],
    *,
    principal,
    lookup: Callable[[str], Memory],
    reason: str = "",
    target: Scope | None = None,
    pinned: str = "original",
    retire_original: bool = False,
) -> BulkReport:
    """Apply `action` to each memory `lookup(uid)` finds (it raises NotFound for one the
    caller may not read), each in its own change; per-memory failures go in the report,
    which is then recorded.

    Arguments every memory needs are checked once, before anything runs: an invalidation
    needs a reason, a republish its target (and, as options, the pin of what it writes and
    whether the originals are retired).
    """
    chosen = check_batch(action, uids)
    if action == "invalidate":
        reason = curation.checked_reason(reason, "say why the memories are invalid")
    report = BulkReport(new_id("bulk"), action, principal.name, started=timezone.now())
    if action == "republish":
        if target is None:
            raise Invalid("choose the scope to republish at")
        if pinned not in PIN_CHOICES:
            raise Invalid("choose how the republished memories are pinned")
        report.target, report.pinned, report.retire_original = target.token, pinned, retire_original
    act = partial(_one, report, principal=principal, reason=reason, target=target)
    with in_bulk(report.bulk_id):
        for uid in chosen:
            report.outcomes.append(_member(uid, lookup, act))
    _record(report, principal)
    return report


def _record(report: BulkReport, principal) -> None:
    """The bulk's own access-log row: what was asked and, member by member, what happened."""
    named = {o.uid for o in report.outcomes if o.scope} | {o.made for o in report.outcomes}
    access_log.record(
        principal,
        RECORD_ACTION,
        200,
        memory_ids=sorted(uid for uid in named if uid),
        count=len(report.done),
        detail=report.detail(),
    )
    report.finished = timezone.now()


def recorded(bulk_id: str) -> BulkReport | None:
    """The bulk `bulk_id` as its record holds it, or None (callers scope what they show)."""
    if not BULK_ID_RE.fullmatch(bulk_id):
        return None
    row = (
        AccessLog.objects.filter(action=RECORD_ACTION, detail__bulk=bulk_id).order_by("-id").first()
    )
    if row is None:
        return None
    detail = row.detail
    started = parse_datetime(detail.get("started") or "") or row.created_at
    return BulkReport(
        bulk_id=bulk_id,
        action=detail.get("action", ""),
        principal=row.principal,
        started=started,
        finished=row.created_at,
        target=detail.get("target", ""),
        pinned=detail.get("pinned", ""),
        retire_original=bool(detail.get("retire_original")),
        undoes=detail.get("undoes", ""),
        outcomes=[Outcome.from_row(o) for o in detail.get("outcomes", [])],
    )


def undone_by(bulk_id: str) -> str:
    """The id of the bulk that undid `bulk_id`, or ""."""
    row = (
        AccessLog.objects.filter(action=RECORD_ACTION, detail__undoes=bulk_id)
        .order_by("id")
        .values_list("detail", flat=True)
        .first()
    )
    return row["bulk"] if row else ""


def events_of(report: BulkReport, events):
    """The ledger events among `events` (a LedgerEvent queryset, scoped by the caller) that
    the bulk's changes wrote, oldest first (ledger_created_idx finds its time window)."""
    finished = report.finished or timezone.now()
    return events.filter(
        created_at__gte=(report.started or finished) - CLOCK_MARGIN,
        created_at__lte=finished + CLOCK_MARGIN,
        payload__bulk=report.bulk_id,
    ).order_by("id")


# --- undo ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """Undoing one member's change."""

    member: str  # the memory the bulk acted on
    scope: str  # its scope
    step: str  # unpin, pin, reinstate, invalidate or unrepublish
    version: str  # the version the reversal acts on
    retired_original: bool = False  # unrepublish: bring the original back too
    skip: str = ""  # why it is left as it is (a reason code); "" when it will run


def undo_steps(events) -> list[Step]:
    """Each event's reversal (events of a bulk of an UNDOABLE action: ledger rows or
    anything with `kind`, `scope` and `payload`)."""
    steps = []
    for event in events:
        p = event.payload
        if event.kind in ("memory.pinned", "memory.unpinned"):
            step = "unpin" if event.kind == "memory.pinned" else "pin"
            steps.append(Step(p["memory"], event.scope, step, p["memory"]))
        elif event.kind == "memory.invalidated":
            steps.append(Step(p["memory"], event.scope, "reinstate", p["memory"]))
        elif event.kind == "memory.reinstated":
            steps.append(Step(p["restores"], event.scope, "invalidate", p["memory"]))
        elif event.kind == "memory.promoted":
            scope = p.get("from_scope") or event.scope
            retired = bool(p.get("retired_original"))
            steps.append(Step(p["promoted_from"], scope, "unrepublish", p["memory"], retired))
    return steps


def _returnable(memory: Memory, reason: str) -> bool:
    """Retired for `reason`, with no successor and its slot free."""
    return (
        memory.retired_reason == reason
        and not Memory.objects.filter(supersedes=memory).exists()
        and not Memory.objects.filter(
            scope_id=memory.scope_id, key=memory.key, retired_at=None
        ).exists()
    )


def _why_left(step: Step, rows: dict[str, Memory]) -> str:
    """ "" when the member is as the bulk left it; otherwise why the undo leaves it."""
    version = rows.get(step.version)
    if version is None:
        return FORGOTTEN
    live = version.retired_at is None
    if step.step in ("unpin", "pin"):
        return "" if live and version.pinned == (step.step == "unpin") else undo.CHANGED
    if step.step == "reinstate":
        return "" if _returnable(version, RetiredReason.INVALIDATED) else undo.CHANGED
    if not live:
        return undo.CHANGED
    if step.step == "unrepublish" and step.retired_original:
        original = rows.get(step.member)
        if original is None:
            return FORGOTTEN
        if not _returnable(original, RetiredReason.PROMOTED):
            return undo.CHANGED
    return ""


def checked(steps: list[Step]) -> list[Step]:
    """The steps, each member no longer as the bulk left it marked with why (`skip`)."""
    uids = {s.version for s in steps} | {s.member for s in steps}
    rows = {m.uid: m for m in Memory.objects.filter(uid__in=uids)}
    return [replace(step, skip=_why_left(step, rows)) for step in steps]


def check_undoable(report: BulkReport) -> None:
    """Invalid when this bulk cannot be undone (what it did, or undone already)."""
    if report.action == UNDO:
        raise Invalid("an undo is not undone in turn; each memory's page can revert it")
    if report.action not in UNDOABLE:
        raise Invalid("forgetting cannot be undone: every version was erased")
    done_by = undone_by(report.bulk_id)
    if done_by:
        raise Invalid(f"this bulk was undone already, by {done_by}")


def _reverse(step: Step, memory: Memory, *, principal, note: str) -> Outcome:
    if step.step in ("unpin", "pin"):
        curation.set_pinned(memory, step.step == "pin", principal=principal)
    elif step.step == "reinstate":
        return Outcome(step.member, made=undo.reinstate(memory, principal=principal).uid)
    elif step.step == "invalidate":
        curation.invalidate(memory, note, principal=principal)
    else:
        written = undo.unrepublish(
            memory, principal=principal, retired_original=step.retired_original, note=note
        )
        return Outcome(step.member, made=written[-1].uid if written else "")
    return Outcome(step.member)


def undo_bulk(
    report: BulkReport, steps: list[Step], *, principal, lookup: Callable[[str], Memory]
) -> BulkReport:
    """Undo `report`'s changes (`steps`, from undo_steps over the events its caller may
    read) as a new bulk: each member through its single-memory service, in its own change,
    tagged with the new bulk's id; a member changed since is left as it is and reported."""
    check_undoable(report)
    steps = checked(steps)
    if not steps:
        raise Invalid("this bulk changed nothing that can be undone")
    new = BulkReport(new_id("bulk"), UNDO, principal.name, started=timezone.now())
    new.undoes = report.bulk_id
    note = f"undoing bulk {report.bulk_id}"
    with in_bulk(new.bulk_id):
        for step in steps:
            if step.skip:
                outcome = Outcome(step.member, step.scope, SKIPPED, step.skip, step=step.step)
            else:
                act = partial(_reverse, step, principal=principal, note=note)
                outcome = _member(step.version, lookup, act)
                outcome = replace(outcome, uid=step.member, scope=step.scope, step=step.step)
            new.outcomes.append(outcome)
    _record(new, principal)
    return new


# --- how a report says it ----------------------------------------------------------------

_DONE = {
    "pin": "pinned",
    "unpin": "unpinned",
    "invalidate": "invalidated",
    "reinstate": "reinstated as {made}",
    "forget": "forgotten ({count} {versions} erased)",
}
_UNDONE = {
    "unpin": "unpinned again",
    "pin": "pinned again",
    "reinstate": "reinstated as {made}",
    "invalidate": "invalidated again",
    "unrepublish": "republication taken back",
}
_LEFT = {
    undo.CHANGED: "changed since the bulk: left as it is",
    FORGOTTEN: "forgotten since: nothing to bring back",
}
_REFUSED = {
    undo.CHANGED: "changed since: no longer as it was when selected",
    undo.NOT_INVALIDATED: "not invalidated: nothing to reinstate",
    undo.REINSTATED_ALREADY: "reinstated already: see its newer version",
    undo.SLOT_TAKEN: "another live value now holds its key at that scope",
    "bad_key": "its key no longer passes the checks",
    "bad_fact": "its text no longer passes the checks",
}
_BY_STATUS = {
    403: "not allowed: you do not administer a scope this needs",
    404: "not found, or no longer live",
    410: "its actor was erased",
    422: "refused as invalid",
}


def describe(report: BulkReport, o: Outcome) -> str:
    """What happened to one member, in words (the record holds codes)."""
    if o.status == SKIPPED:
        return _LEFT.get(o.reason, "left as it is")
    if not o.done:
        if o.reason in _REFUSED:
            return _REFUSED[o.reason]
        if o.status == 422 and report.action == "republish":
            return f"{report.target} is not wider than its scope"
        return _BY_STATUS.get(o.status, "refused")
    if report.action == UNDO:
        said = _UNDONE.get(o.step, "undone")
        if o.step == "unrepublish" and o.made:
            said += f"; {o.made} is live again"
    elif report.action == "republish":
        said = f"republished at {report.target} as {o.made}"
        if report.retire_original:
            said += "; the original retired"
    else:
        said = _DONE.get(report.action, "done")
    return said.format(made=o.made, count=o.count, versions=_plural(o.count, "version"))


def _plural(count: int, thing: str) -> str:
    return thing if count == 1 else f"{thing}s"
