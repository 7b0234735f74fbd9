"""Bulk actions: one decision applied to many memories (the console's finder and scope page).

A bulk action is no new kind of change: it loops the single-memory service (curation's pin,
unpin and invalidate, writes.promote, forgetting.forget), each memory in its own audited
change, so each memory's ledger event and access-log row are exactly those of the single
action, tagged with the bulk id (changes.in_bulk). One memory's refusal (403), absence
(404) or conflict (409, 422) is written to its outcome and the loop goes on: what was done
stays done, and the report says, memory by memory, what happened.
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from memory_core import curation, forgetting, writes
from memory_core.changes import in_bulk
from memory_core.errors import DomainError, Invalid
from memory_core.models import Memory, Scope
from memory_core.rules.ids import new_id

MAX_BATCH = 200
ACTIONS = ("pin", "unpin", "invalidate", "republish", "forget")


@dataclass(frozen=True)
class Outcome:
    uid: str
    key: str  # "" when the memory was not found (nothing about it may be shown)
    status: int  # 200 done; otherwise the refusal's status
    message: str


@dataclass
class BulkReport:
    bulk_id: str
    action: str
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def done(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status == 200]

    @property
    def failed(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status != 200]


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


def _one(action: str, memory: Memory, *, principal, reason: str, target: Scope | None) -> str:
    if action in ("pin", "unpin"):
        curation.set_pinned(memory, action == "pin", principal=principal)
        return "pinned" if action == "pin" else "unpinned"
    if action == "invalidate":
        curation.invalidate(memory, reason, principal=principal)
        return "invalidated"
    if action == "republish":
        new = writes.promote(memory, target, principal=principal)
        return f"republished at {target.token} as {new.uid}"
    result = forgetting.forget(memory, principal=principal)
    return f"forgotten ({len(result.memory_ids)} versions)"


def run(
    action: str,
    uids: Iterable[str],
    *,
    principal,
    lookup: Callable[[str], Memory],
    reason: str = "",
    target: Scope | None = None,
) -> BulkReport:
    """Apply `action` to each memory `lookup(uid)` finds (it raises NotFound for one the
    caller may not read), each in its own change; per-memory failures go in the report.

    Arguments every memory needs are checked once, before anything runs: an invalidation
    needs a reason, a republish its target.
    """
    chosen = check_batch(action, uids)
    if action == "invalidate" and not (reason or "").strip():
        raise Invalid("say why the memories are invalid")
    if action == "republish" and target is None:
        raise Invalid("choose the scope to republish at")
    report = BulkReport(bulk_id=new_id("bulk"), action=action)
    with in_bulk(report.bulk_id):
        for uid in chosen:
            key = ""
            try:
                memory = lookup(uid)
                key = memory.key
                message = _one(action, memory, principal=principal, reason=reason, target=target)
            except DomainError as error:
                # A lookup's 404 says nothing more; a service's (no longer live) may.
                text = error.message if key else "not found"
                report.outcomes.append(Outcome(uid, key, error.status, text))
            else:
                report.outcomes.append(Outcome(uid, key, 200, message))
    return report
