"""Forget: erase every version of a memory and every prompt-line copy of its text.

This module holds the one sanctioned DELETE of memory rows (the database refuses any
other). The server's role cannot lift that refusal (memory_core/db/trigger_ignore.py), so the
rows go through memory_core_forget_lineage (migration 0023): a function the owner wrote,
which lifts it for its own statements only. Privacy outranks replay: stored digests that
showed the memory are rewritten so the line stays but says `[forgotten]`, and a later replay
returns the scrubbed digest.
"""

from dataclasses import dataclass

from django.db import connection

from memory_core.accounts.permissions import can_administer
from memory_core.changes import Change, audited
from memory_core.db.locks import advisory_xact_lock
from memory_core.errors import Forbidden, NotFound
from memory_core.models import Digest, DigestLine, Memory
from memory_core.rules.block import FORGOTTEN, scrub
from memory_core.rules.facts import Line
from memory_core.rules.verdicts import ALLOW, FORBIDDEN, forget_verdict

# Deletes every version of a lineage, newest first, with the owner's rights; a version's
# vector and gardening evidence go with it (ON DELETE CASCADE).
FORGET_LINEAGE = "SELECT memory_core_forget_lineage(%s)"


@dataclass(frozen=True)
class Forgotten:
    memory_ids: tuple[str, ...]
    digests: int
    lines: int


def forget_for_actor(memory: Memory, actor, chain, *, principal) -> Forgotten:
    """The API's forget: own scope only (403 if visible but wider; callers 404 the rest)."""
    with audited(principal, "forget", actor_ref=actor.ref) as change:
        verdict = forget_verdict(memory.scope.token, chain)
        if verdict == FORBIDDEN:
            raise Forbidden(
                "this memory is held at a wider scope; an administrator forgets it in the console"
            )
        if verdict != ALLOW:
            raise NotFound("memory not found")
        return _forget(change, memory)


def forget(memory: Memory, *, principal) -> Forgotten:
    """The console's and operators' forget: an administrator of the memory's scope."""
    with audited(principal, "forget", scope=memory.scope.token) as change:
        if not principal.is_human or not can_administer(principal, memory.scope):
            raise Forbidden(f"you do not administer {memory.scope.token}")
        return _forget(change, memory)


def _forget(change: Change, memory: Memory) -> Forgotten:
    result = forget_lineage(change, memory)
    change.log(
        204,
        scope=memory.scope.token,
        memory_ids=result.memory_ids,
        count=len(result.memory_ids),
        detail={"digests": result.digests, "lines": result.lines},
    )
    return result


def forget_lineage(change: Change, memory: Memory) -> Forgotten:
    """The erasure itself, inside a caller's change (forget, or erasure.erase_actor, which
    forgets many memories in one change): its ledger event is added to `change`, and the
    caller writes the change's access-log row."""
    scope = memory.scope
    advisory_xact_lock("memory", scope.id, memory.key)
    versions = list(
        Memory.objects.select_for_update().filter(lineage=memory.lineage).order_by("id")
    )
    if not versions:
        raise NotFound("memory not found")
    uids = {m.uid for m in versions}
    digests, lines = _scrub_digests(uids)
    # Other memories may point here (a promotion's promoted_from); they keep their own
    # text, which a person chose to republish, but lose the link.
    Memory.objects.filter(promoted_from__in=versions).exclude(lineage=memory.lineage).update(
        promoted_from=None
    )
    # By memory_uid (indexed): the lines' memory column has no index of its own.
    DigestLine.objects.filter(memory_uid__in=uids, memory__isnull=False).update(memory=None)
    # The versions locked above, and no other: a new version locks the live one first.
    with connection.cursor() as cursor:
        cursor.execute(FORGET_LINEAGE, [memory.lineage])
    result = Forgotten(memory_ids=tuple(sorted(uids)), digests=digests, lines=lines)
    change.event(
        "memory.forgotten",
        scope,
        {"memories": sorted(uids), "versions": len(uids), "digests": digests, "lines": lines},
        actor_ref=change.actor_ref,
    )
    return result


def _scrub_digests(uids: set[str]) -> tuple[int, int]:
    digest_ids = set(
        DigestLine.objects.filter(memory_uid__in=uids).values_list("digest_id", flat=True)
    )
    scrubbed_lines = 0
    for digest in Digest.objects.select_for_update().filter(id__in=digest_ids):
        rows = list(digest.lines.order_by("n"))
        lines = [Line(n=r.n, text=r.text, memory_id=r.memory_uid) for r in rows]
        block, new_lines = scrub(digest.block, lines, uids)
        digest.block = block
        digest.entries = scrub_entries(digest.entries, uids)
        digest.stats = {**digest.stats, "prompt_chars": len(block)}
        digest.save(update_fields=["block", "entries", "stats"])
        for row, line in zip(rows, new_lines, strict=True):
            if row.text != line.text:
                row.text = line.text
                row.save(update_fields=["text"])
                scrubbed_lines += 1
    return len(digest_ids), scrubbed_lines


def scrub_entries(entries: list[dict], uids: set[str]) -> list[dict]:
    """Stored entries lose the key and text of forgotten memories (a key reveals as much)."""
    cleaned = []
    for entry in entries:
        entry = dict(entry)
        if entry.get("id") in uids:
            entry["key"] = FORGOTTEN
            entry["text"] = FORGOTTEN
            entry["tags"] = []
        entry["overrides"] = [
            {**o, "text": FORGOTTEN} if o.get("id") in uids else o
            for o in entry.get("overrides", [])
        ]
        cleaned.append(entry)
    return cleaned
