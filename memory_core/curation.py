"""Decisions about an existing memory: pin, unpin, tag, set or clear its expiry, invalidate
(a person's), and the agent's one decision, invalidating a memory at its actor's own scope."""

from datetime import UTC, datetime

from django.utils import timezone

from memory_core.accounts.permissions import may_write, write_verdict
from memory_core.changes import Change, audited
from memory_core.errors import Forbidden, Invalid, NotFound
from memory_core.models import Memory, RetiredReason
from memory_core.writes import check_tags, lock_slot, retire

MAX_REASON_CHARS = 500


def checked_reason(reason: str | None, missing: str) -> str:
    """A person's reason (invalidating a memory, dismissing a proposal), stripped: one line
    of at most MAX_REASON_CHARS characters; `missing` is the refusal when there is none."""
    reason = (reason or "").strip()
    if not reason:
        raise Invalid(missing)
    if len(reason) > MAX_REASON_CHARS or "\n" in reason or "\x00" in reason:
        raise Invalid(f"the reason is one line of at most {MAX_REASON_CHARS} characters")
    return reason


def _locked_live(memory: Memory) -> Memory:
    live = lock_slot(memory.scope, memory.key)
    if live is None or live.pk != memory.pk:
        raise NotFound("that version is no longer live; reload to see the current one")
    return live


def _check_admin(principal, memory: Memory) -> None:
    if not may_write(principal, memory.scope):
        raise Forbidden(f"you do not administer {memory.scope.token}")


def set_pinned(memory: Memory, pinned: bool, *, principal) -> Memory:
    """Pin or unpin. A pin belongs to the key: it makes the key always-on in every chain
    that holds this scope, whichever scope's value wins."""
    action = "pin" if pinned else "unpin"
    with audited(principal, action, scope=memory.scope.token) as change:
        _check_admin(principal, memory)
        live = _locked_live(memory)
        if live.pinned != pinned:
            live.pinned = pinned
            live.save(update_fields=["pinned"])
            change.event(
                "memory.pinned" if pinned else "memory.unpinned",
                live.scope,
                {"memory": live.uid, "pinned": pinned},
            )
        change.log(200, memory_ids=[live.uid], count=1)
    return live


def set_tags(memory: Memory, tags, *, principal) -> Memory:
    """Replace a live memory's tags. Tags are labels for finding memories, not part of the
    fact (the memory_fields_immutable trigger leaves them out): changed in place, ledgered
    by count only, since a tag can be as revealing as a key."""
    with audited(principal, "tag", scope=memory.scope.token) as change:
        _check_admin(principal, memory)
        tags = check_tags(tags)
        live = _locked_live(memory)
        if list(live.tags) == tags:
            raise Invalid("those are the tags it has; nothing was changed")
        live.tags = tags
        live.save(update_fields=["tags"])
        change.event("memory.tagged", live.scope, {"memory": live.uid, "count": len(tags)})
        change.log(200, memory_ids=[live.uid], count=1)
    return live


def set_expiry(memory: Memory, expires_at: datetime, *, principal) -> Memory:
    """From `expires_at` on, the live memory reaches no prompt (it keeps its slot and its
    history until someone retires it). Expiry is not part of the fact (the
    memory_fields_immutable trigger leaves it out, and the maintained counts set expired
    rows apart at read time): changed in place, as a pin is. Setting a time in the future
    on a memory already expired brings it back into prompts until then."""
    with audited(principal, "expiry.set", scope=memory.scope.token) as change:
        _check_admin(principal, memory)
        if timezone.is_naive(expires_at):
            raise Invalid("an expiry needs a time zone")
        if expires_at <= timezone.now():
            raise Invalid("the expiry must lie in the future")
        try:
            expires_at = expires_at.astimezone(UTC)
        except OverflowError:  # past the year 9999 once in UTC: no datetime holds it
            raise Invalid("the expiry must lie before the year 10000") from None
        live = _locked_live(memory)
        if live.expires_at != expires_at:
            live.expires_at = expires_at
            live.save(update_fields=["expires_at"])
            change.event(
                "memory.expiry_set",
                live.scope,
                {"memory": live.uid, "expires_at": expires_at.isoformat()},
            )
        change.log(200, memory_ids=[live.uid], count=1)
    return live


def clear_expiry(memory: Memory, *, principal) -> Memory:
    """The live memory never expires (and one that had expired is back in prompts)."""
    with audited(principal, "expiry.clear", scope=memory.scope.token) as change:
        _check_admin(principal, memory)
        live = _locked_live(memory)
        if live.expires_at is not None:
            live.expires_at = None
            live.save(update_fields=["expires_at"])
            change.event("memory.expiry_cleared", live.scope, {"memory": live.uid})
        change.log(200, memory_ids=[live.uid], count=1)
    return live


def invalidate(memory: Memory, reason: str, *, principal) -> Memory:
    """Retire a live memory as wrong, with the reason kept on the row (not in the ledger,
    which records only its length: a reason often quotes the fact)."""
    with audited(principal, "invalidate", scope=memory.scope.token) as change:
        _check_admin(principal, memory)
        return _invalidate(change, memory, reason)


def invalidate_for_actor(memory: Memory, actor, reason: str, *, principal) -> Memory:
    """The agent's invalidate (MCP `invalidate_memory`): a memory at its actor's own scope
    only; one the actor sees held wider is Forbidden (callers answer "not found" for one it
    cannot see, as for a read).

    This, not forgetting, is what a model may do: the memory leaves the prompt but stays in
    its history, where a person can reinstate it (undo.reinstate). A prompt injection
    ("forget everything about me") must not be able to erase anything; erasure is the
    host's privacy act (DELETE /memories/{id}) or an administrator's.
    """
    with audited(principal, "invalidate", actor_ref=actor.ref, scope=memory.scope.token) as change:
        verdict = write_verdict(principal, memory.scope, actor=actor)
        if not verdict.allowed:
            raise Forbidden(
                "this memory is held at a wider scope; an administrator invalidates it in "
                "the console",
                reason=verdict.reason,
            )
        return _invalidate(change, memory, reason, actor_ref=actor.ref)


def _invalidate(
    change: Change, memory: Memory, reason: str, actor_ref: str | None = None
) -> Memory:
    reason = checked_reason(reason, "say why the memory is invalid")
    live = _locked_live(memory)
    retire(live, RetiredReason.INVALIDATED, change.principal, note=reason)
    change.event(
        "memory.invalidated",
        live.scope,
        {"memory": live.uid, "reason_chars": len(reason)},
        actor_ref=actor_ref,
    )
    change.log(200, memory_ids=[live.uid], count=1)
    return live
