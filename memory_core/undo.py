"""Undo without rewriting history: reinstate an invalidated memory, revert a live one to an
earlier version's text.

Both are people's acts and both write a NEW human-authored version in the same lineage
(memory text is never edited in place, and the retired rows keep their record); the ledger
event names the version whose text comes back (`restores`).
"""

from django.utils import timezone

from memory_core.accounts.permissions import may_write
from memory_core.changes import audited
from memory_core.errors import Forbidden, Invalid, NotFound
from memory_core.models import Author, Memory, RetiredReason
from memory_core.writes import Written, lock_slot, log_written, supersede


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


def _human_version(live, principal, text: str, *, like: Memory, **fields) -> Memory:
    """A person's new version with `text`, keeping `like`'s scope, key, pin, tags and
    expiry (any of them overridden by `fields`); supersedes `live` when there is one."""
    values = {
        "scope": like.scope,
        "key": like.key,
        "text": text,
        "author": Author.HUMAN,
        "origin_user": principal.username,
        "pinned": like.pinned,
        "tags": list(like.tags),
        "expires_at": like.expires_at,
        **fields,
    }
    return supersede(live, principal, **values)


def reinstate(memory: Memory, *, principal) -> Memory:
    """An invalidated memory's text back as the live value of its (scope, key).

    Refused while another live value holds the slot (published since): replacing a value a
    person or agent wrote after the invalidation is a correction of that value, which its
    own page offers. Nothing is superseded silently.
    """
    scope = memory.scope
    with audited(principal, "reinstate", scope=scope.token) as change:
        _check_admin(principal, memory)
        live = lock_slot(scope, memory.key)
        # Re-read under the lock: it may have been reinstated or forgotten meanwhile.
        current = Memory.objects.filter(pk=memory.pk).first()
        if current is None:
            raise NotFound("memory not found")
        if current.retired_reason != RetiredReason.INVALIDATED:
            raise Invalid("only an invalidated memory can be reinstated")
        if Memory.objects.filter(supersedes=current).exists():
            raise Invalid("this memory has been reinstated already; see its newer version")
        if live is not None:
            raise Invalid(
                f"another live value ({live.uid}) now holds this key at {scope.token}; "
                "correct or revert that one instead"
            )
        # Same lineage, linked to the version it brings back: forget erases them together
        # and the version chain reads in order.
        new = _human_version(
            None,
            principal,
            current.text,
            like=current,
            expires_at=_carried_expiry(current),
            supersedes=current,
            lineage=current.lineage,
        )
        change.event(
            "memory.reinstated",
            scope,
            {"memory": new.uid, "restores": current.uid, "chars": len(new.text)},
        )
        return log_written(change, Written(new, created=True)).memory


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
