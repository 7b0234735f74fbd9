"""Erase a person (right to erasure): everything held about one actor, in one change.

What goes: every memory at the actor's own scope, and any memory its agent wrote anywhere
(every version, its vector, every prompt-line copy: forgetting.forget_lineage); the text
of its stored turns (digests are never deleted, the app role may not: their query, block,
entries and lines are scrubbed in place, ids and counts stay); its conversation threads
and their messages; and the API keys bound to it are revoked.

What stays, on purpose:
- the actor row, as a tombstone: its ref is named by ledger events and access-log rows
  that may not change, so it keeps its ref and memberships and loses its display name;
- a memory a person republished wider from the actor's (`promoted_from`): it is the
  organisation's own memory now, authored by that person, so it stays, unlinked from the
  erased original (as a forget leaves it);
- the ledger and the access log, which never held text: ids, counts and hashes only.
  Erasure adds one `actor.erased` event with counts.

A key bound to the actor is revoked whatever its reach: it can act for no one else, and
the administrator of the actor is the one deciding that it stops.
"""

import time
from dataclasses import asdict, dataclass

import psycopg
from django.db import OperationalError, connection
from django.db.models import Q
from django.utils import timezone

from memory_core.accounts.permissions import can_administer
from memory_core.changes import audited
from memory_core.errors import Forbidden, Invalid
from memory_core.forgetting import forget_lineage
from memory_core.ledger import access_log
from memory_core.models import Actor, ApiKey, Digest, DigestLine, Memory, Message, Thread

ERASED = "[erased]"


@dataclass(frozen=True)
class Erased:
    """What one erasure removed (the report; also the ledger event's payload)."""

    memories: int  # memories forgotten (each with all its versions)
    versions: int
    digests: int  # stored turns whose text was scrubbed
    lines: int  # their prompt lines
    threads: int
    messages: int
    api_keys: int  # bound keys revoked now
    republished: int  # copies a person republished wider: kept, unlinked

    def as_dict(self) -> dict:
        return asdict(self)

    def report(self, ref: str) -> str:
        """What was removed, in one paragraph (the console's notice, the command's output)."""
        return (
            f"Erased {ref}: {_count(self.memories, 'memory', 'memories')} forgotten "
            f"({_count(self.versions, 'version')}); the text of "
            f"{_count(self.digests, 'stored turn')} erased ({_count(self.lines, 'prompt line')}); "
            f"{_count(self.threads, 'conversation')} with {_count(self.messages, 'message')} "
            f"deleted; {_count(self.api_keys, 'bound API key')} revoked. "
            f"{_count(self.republished, 'copy', 'copies')} republished wider by a person kept as "
            "the organisation's own. The ledger records the counts (actor.erased)."
        )


def _count(n: int, thing: str, things: str | None = None) -> str:
    return f"{n} {thing if n == 1 else (things or thing + 's')}"


# Memories forgotten, and stored turns scrubbed, per transaction: each batch holds its locks
# for moments, so a console act on the same rows waits briefly rather than for the whole erasure.
BATCH = 50
# A batch that loses a deadlock (to a console act, say) is run again; it changed nothing.
DEADLOCK_RETRIES = 5


def erase_actor(actor: Actor, *, principal) -> Erased:
    """An administrator of the actor's scope erases the person the actor stands for.

    On a busy server, in this order: first no new write for the person can land (the actor
    is marked erased and the keys bound to it are revoked, in one short transaction that
    waits for the writes already under way), then what is held is removed in batches, each
    its own transaction, then the counts are ledgered. Nothing a writer does holds a lock the
    batches need while waiting for one they hold, so the erasure does not deadlock against
    turns, remember or messages; an erasure cut short leaves the actor marked (every write
    still refused) and is finished by running it again.
    """
    with access_log.refusals_logged(
        principal, "actor.erase", actor_ref=actor.ref, scope=actor.scope.token
    ):
        if not principal.is_human or not can_administer(principal, actor.scope):
            raise Forbidden(f"you do not administer {actor.scope.token}")
    api_keys = _mark_erased(actor, principal)
    # Memories first: forgetting one rewrites the stored blocks that showed it, which must
    # still be there to be rewritten; then what is left of the turns goes whole.
    republished, memories, versions = _forget_memories(principal, actor)
    _, lines = _in_batches(principal, actor, _scrub_turns, "turns")
    # Every stored turn of the person is scrubbed now (as one erasure always reported it).
    digests = Digest.objects.filter(actor=actor).count()
    threads, messages = _in_batches(principal, actor, _delete_transcripts, "transcripts")
    erased = Erased(
        memories=memories,
        versions=len(versions),
        digests=digests,
        lines=lines,
        threads=threads,
        messages=messages,
        api_keys=api_keys,
        republished=republished,
    )
    with audited(principal, "actor.erase", actor_ref=actor.ref, scope=actor.scope.token) as change:
        change.event("actor.erased", actor.scope, erased.as_dict(), actor.ref)
        change.log(200, memory_ids=sorted(versions), count=len(versions), detail=erased.as_dict())
    return erased


def _mark_erased(actor: Actor, principal) -> int:
    """Step one: refused, or the actor marked erased (every write naming it is then a 410)
    and its bound keys revoked. FOR UPDATE waits for every write already holding the actor
    (each takes FOR KEY SHARE on it, models/guards.py) and makes later ones see the mark."""
    with audited(
        principal, "actor.erase.start", actor_ref=actor.ref, scope=actor.scope.token
    ) as change:
        if not principal.is_human or not can_administer(principal, actor.scope):
            raise Forbidden(f"you do not administer {actor.scope.token}")
        locked = Actor.objects.select_for_update().get(pk=actor.pk)
        if locked.erased_at is None:
            locked.erased_at = timezone.now()
        locked.display_name = ""
        locked.save(update_fields=["erased_at", "display_name"])
        actor.erased_at, actor.display_name = locked.erased_at, ""
        api_keys = _revoke_keys(change, locked)
        change.event("actor.erase_started", actor.scope, {"api_keys": api_keys}, actor.ref)
        change.log(200, detail={"step": "started", "api_keys": api_keys})
    return api_keys


def reopen_actor(actor: Actor, *, principal) -> Actor:
    """A superuser lets an erased ref be written again (a new person, or a mistake undone):
    what was erased stays erased; only new writes are taken."""
    with audited(principal, "actor.reopen", actor_ref=actor.ref, scope=actor.scope.token) as change:
        if principal.user is None or not principal.user.is_superuser:
            raise Forbidden("only a superuser reopens an erased actor")
        locked = Actor.objects.select_for_update().get(pk=actor.pk)
        if locked.erased_at is None:
            raise Invalid(f"actor {actor.ref} is not erased")
        locked.erased_at = None
        locked.save(update_fields=["erased_at"])
        change.event("actor.reopened", actor.scope, {}, actor.ref)
        change.log(200)
    return locked


def _in_batches(principal, actor: Actor, step, name: str) -> tuple[int, int]:
    """Run `step(actor)` (one batch; returns two counts, (0, 0) when nothing is left) in
    its own transaction until nothing is left, the totals added up."""
    totals = (0, 0)
    while True:
        done = _retrying(lambda: _one_batch(principal, actor, step, name))
        if done == (0, 0):
            return totals
        totals = (totals[0] + done[0], totals[1] + done[1])


def _one_batch(principal, actor: Actor, step, name: str) -> tuple[int, int]:
    with audited(
        principal, "actor.erase.batch", actor_ref=actor.ref, scope=actor.scope.token
    ) as change:
        done = step(actor)
        if done == (0, 0):
            change.unchanged()
        else:
            change.log(200, count=done[0], detail={"step": name, "rows": list(done)})
        return done


def _retrying(batch):
    for attempt in range(DEADLOCK_RETRIES):
        try:
            return batch()
        except (OperationalError, psycopg.errors.DeadlockDetected) as error:
            deadlock = isinstance(error, psycopg.errors.DeadlockDetected) or isinstance(
                error.__cause__, psycopg.errors.DeadlockDetected
            )
            if not deadlock or attempt == DEADLOCK_RETRIES - 1:
                raise
            time.sleep(0.05 * (attempt + 1))


def _forget_memories(principal, actor: Actor) -> tuple[int, int, set[str]]:
    """Forget every memory at the actor's scope or written by its agent anywhere (an agent
    writes only at its own scope; the second half is belt and braces), BATCH lineages a
    transaction."""
    held = Memory.objects.filter(Q(scope=actor.scope) | Q(origin_actor=actor))
    lineages = sorted(set(held.values_list("lineage", flat=True)))
    republished = (
        Memory.objects.filter(promoted_from__lineage__in=lineages)
        .exclude(lineage__in=lineages)
        .count()
    )
    versions: set[str] = set()
    forgotten = 0
    for start in range(0, len(lineages), BATCH):
        batch = lineages[start : start + BATCH]
        found = _retrying(lambda batch=batch: _forget_batch(principal, actor, batch))
        forgotten += len(found[0])
        versions.update(found[1])
    return republished, forgotten, versions


def _forget_batch(principal, actor: Actor, lineages) -> tuple[list, set[str]]:
    with audited(
        principal, "actor.erase.batch", actor_ref=actor.ref, scope=actor.scope.token
    ) as change:
        forgotten, versions = [], set()
        for lineage in lineages:
            memory = Memory.objects.select_related("scope").filter(lineage=lineage).first()
            if memory is None:  # forgotten meanwhile
                continue
            forgotten.append(lineage)
            versions.update(forget_lineage(change, memory).memory_ids)
        if not forgotten:
            change.unchanged()
        else:
            change.log(
                200,
                memory_ids=sorted(versions),
                count=len(versions),
                detail={"step": "memories"},
            )
        return forgotten, versions


def _scrub_turns(actor: Actor) -> tuple[int, int]:
    """BATCH stored turns of the actor not yet scrubbed lose their text: the query (what the
    person asked), the block and entries (what the agent was told), the lines. The row, its
    run id and its counts stay, so the ledger's and access log's references still resolve.
    A scrubbed turn is marked by its stats' `erased`, so a batch never takes one twice."""
    ids = list(
        Digest.objects.filter(actor=actor)
        .exclude(stats__has_key="erased")
        .order_by("id")
        .values_list("id", flat=True)[:BATCH]
    )
    if not ids:
        return 0, 0
    with connection.cursor() as cursor:
        cursor.execute(
            """
            UPDATE memory_core_digest
            SET query = NULL, block = '', entries = '[]'::jsonb,
                stats = stats || '{"prompt_chars": 0, "erased": true}'::jsonb
            WHERE id = ANY(%s)
            """,
            [ids],
        )
        turns = cursor.rowcount
    lines = DigestLine.objects.filter(digest_id__in=ids).exclude(text=ERASED).update(text=ERASED)
    return turns, lines


def _delete_transcripts(actor: Actor) -> tuple[int, int]:
    """BATCH of the actor's conversations and their messages (no message can be added to
    them now: the actor is marked)."""
    threads = list(Thread.objects.filter(actor=actor).order_by("id")[:BATCH])
    if not threads:
        return 0, 0
    messages, _ = Message.objects.filter(thread__in=threads).delete()
    count, _ = Thread.objects.filter(pk__in=[t.pk for t in threads]).delete()
    return count, messages


def _revoke_keys(change, actor: Actor) -> int:
    live = list(
        ApiKey.objects.select_for_update()
        .select_related("reach")
        .filter(actor=actor, revoked_at__isnull=True)
    )
    now = timezone.now()
    for key in live:
        key.revoked_at = now
        key.save(update_fields=["revoked_at"])
        change.event("api_key.revoked", key.reach, {"api_key": key.uid}, actor.ref)
    return len(live)
