"""Undo without rewriting history: reinstate an invalidated memory, take back a republication,
revert a live memory to an earlier version's text.

Each writes NEW versions in the same lineage (memory text is never edited in place, and the
retired rows keep their record). Bringing a version back is not writing it anew: a reinstated
version keeps the author and origin of the version it restores (an agent's conclusion stays
an agent's, in the prompt's "concluded by you" section), and the ledger event names who
brought it back (its principal) and the version whose text returned (`restores`). Revert is
different: a person chooses an earlier text for the live memory, so the new version is theirs.
"""

from django.utils import timezone

from memory_core.accounts.permissions import may_write
from memory_core.changes import Change, audited
from memory_core.curation import checked_reason
from memory_core.errors import Forbidden, Invalid, NotFound
from memory_core.models import Author, Memory, RetiredReason
from memory_core.writes import Written, lock_slot, log_written, retire, supersede

# Refusal reasons a caller can tell apart (memory_core/bulk.py words its report with them).
CHANGED = "changed"  # the memory is no longer as the change being undone left it
NOT_INVALIDATED = "not_invalidated"
REINSTATED_ALREADY = "reinstated_already"
SLOT_TAKEN = "slot_taken"


def _check_admin(principal, memory: Memory) -> None:
    if not principal.is_human:
        raise Forbidden("undo is a human act")
    if not may_write(principal, memory.scope):
        raise Forbidden(f"you do not administer {memory.scope.token}")


def _carried_expiry(memory: Memory):
    # An expiry already past would make the reinstated version dead on arrival.
    if memory.expires_at is not None and memory.expires_at > timezone.now():
        return memory.expires_at
    return None


def _copy_of(version: Memory) -> dict:
    """The fields of a version brought back as it was: its text, its author and origin, its
    pin, tags, link to what it was republished from, and an expiry still ahead.

    Not its tool call: (actor, run, tool call) names one agent write, and a repeated
    remember of that call must find the original (memory_one_write_per_tool_call)."""
    return {
        "scope": version.scope,
        "key": version.key,
        "text": version.text,
        "author": version.author,
        "origin_actor": version.origin_actor,
        "origin_thread": version.origin_thread,
        "origin_run": version.origin_run,
        "origin_user": version.origin_user,
        "pinned": version.pinned,
        "tags": list(version.tags),
        "expires_at": _carried_expiry(version),
        "promoted_from": version.promoted_from,
    }


def _bring_back(change: Change, current: Memory, principal) -> Memory:
    """A retired version (no successor) back as the live value of its free slot, linked to
    it in its lineage; the caller holds the slot's lock and has checked it is free."""
    fields = _copy_of(current)
    new = supersede(None, principal, **fields, supersedes=current, lineage=current.lineage)
    change.event(
        "memory.reinstated",
        current.scope,
        {"memory": new.uid, "restores": current.uid, "chars": len(new.text)},
    )
    return new


def _check_returnable(current: Memory, live: Memory | None, reason: str) -> None:
    """Refuse to bring back a version that was not retired for `reason`, that has a
    successor, or whose slot another live value holds."""
    if current.retired_reason != reason:
        if reason == RetiredReason.INVALIDATED:
            raise Invalid("only an invalidated memory can be reinstated", reason=NOT_INVALIDATED)
        raise Invalid("the original is no longer retired as republished", reason=CHANGED)
    if Memory.objects.filter(supersedes=current).exists():
        raise Invalid(
            "this memory has been reinstated already; see its newer version",
            reason=REINSTATED_ALREADY,
        )
    if live is not None:
        raise Invalid(
            f"another live value ({live.uid}) now holds this key at {current.scope.token}; "
            "correct or revert that one instead",
            reason=SLOT_TAKEN,
        )


def reinstate(memory: Memory, *, principal) -> Memory:
    """An invalidated memory back as the live value of its (scope, key), with its own author
    and origin.

    Refused while another live value holds the slot (published since): replacing a value a
    person or agent wrote after the invalidation is a correction of that value, which its
    own page offers. Nothing is superseded silently.
    """
    scope = memory.scope
    with audited(principal, "reinstate", scope=scope.token) as change:
        _check_admin(principal, memory)
        live = lock_slot(scope, memory.key)
        # Re-read under the lock: it may have been reinstated or forgotten meanwhile.
        rows = Memory.objects.select_related("scope", "origin_actor")
        current = rows.filter(pk=memory.pk).first()
        if current is None:
            raise NotFound("memory not found")
        _check_returnable(current, live, RetiredReason.INVALIDATED)
        new = _bring_back(change, current, principal)
        return log_written(change, Written(new, created=True)).memory


def unrepublish(
    republished: Memory, *, principal, retired_original: bool, note: str
) -> list[Memory]:
    """Take back a republication: the version it replaced at the wider scope returns (with
    its own author, pin and tags), or, where it replaced none, the republished memory is
    invalidated with `note`; and when the republication retired the original, the original
    returns too. One change: all of it, or nothing when anything is no longer as the
    republication left it (reason CHANGED or SLOT_TAKEN). Returns the versions written."""
    target = republished.scope
    original = republished.promoted_from
    with audited(principal, "unrepublish", scope=target.token) as change:
        _check_admin(principal, republished)
        if original is None:
            raise Invalid("this memory was not republished from another", reason=CHANGED)
        if retired_original:
            _check_admin(principal, original)
        note = checked_reason(note, "say why the republication is taken back")
        # Narrower slot first: the one order every writer of two slots uses (writes.promote).
        original_slot = lock_slot(original.scope, original.key) if retired_original else None
        live = lock_slot(target, republished.key)
        if live is None or live.pk != republished.pk:
            raise NotFound("the republished version is no longer live", reason=CHANGED)
        written = []
        replaced = live.supersedes
        if replaced is not None:
            restored = supersede(live, principal, **_copy_of(replaced))
            change.event(
                "memory.reverted",
                target,
                {
                    "memory": restored.uid,
                    "supersedes": live.uid,
                    "restores": replaced.uid,
                    "chars": len(restored.text),
                },
            )
            written.append(restored)
        else:
            retire(live, RetiredReason.INVALIDATED, principal, note=note)
            change.event(
                "memory.invalidated", target, {"memory": live.uid, "reason_chars": len(note)}
            )
        if retired_original:
            current = Memory.objects.select_related("scope", "origin_actor").get(pk=original.pk)
            _check_returnable(current, original_slot, RetiredReason.PROMOTED)
            written.append(_bring_back(change, current, principal))
        ids = [live.uid, *(m.uid for m in written)]
        change.log(200, memory_ids=ids, count=len(ids), detail={"written": len(written)})
        return written


def _human_version(live, principal, text: str, *, like: Memory) -> Memory:
    """A person's new version with `text`, keeping `like`'s scope, key, pin, tags and
    expiry; supersedes `live`."""
    return supersede(
        live,
        principal,
        scope=like.scope,
        key=like.key,
        text=text,
        author=Author.HUMAN,
        origin_user=principal.username,
        pinned=like.pinned,
        tags=list(like.tags),
        expires_at=like.expires_at,
    )


def revert(memory: Memory, to_version: Memory, *, principal) -> Memory:
    """The live `memory` superseded by a new version carrying `to_version`'s text (an earlier
    version of the same lineage); pin, tags and expiry stay the live version's."""
    scope = memory.scope
    with audited(principal, "revert", scope=scope.token) as change:
        _check_admin(principal, memory)
        if to_version.lineage != memory.lineage or to_version.pk == memory.pk:
            raise Invalid("choose an earlier version of this memory")
        live = lock_slot(scope, memory.key)
        if live is None or live.pk != memory.pk:
            raise NotFound("that version is no longer live; reload to see the current one")
        if to_version.text == live.text:
            raise Invalid("that version's text is the current text; nothing was changed")
        new = _human_version(live, principal, to_version.text, like=live)
        change.event(
            "memory.reverted",
            scope,
            {
                "memory": new.uid,
                "supersedes": live.uid,
                "restores": to_version.uid,
                "chars": len(new.text),
            },
        )
        return log_written(change, Written(new, created=True)).memory
