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

from dataclasses import asdict, dataclass

from django.db.models import Q
from django.utils import timezone

from memory_core.changes import audited
from memory_core.errors import Forbidden
from memory_core.forgetting import forget_lineage
from memory_core.models import Actor, ApiKey, Digest, DigestLine, Memory, Message, Thread
from memory_core.permissions import can_administer

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


def erase_actor(actor: Actor, *, principal) -> Erased:
    """An administrator of the actor's scope erases the person the actor stands for."""
    with audited(principal, "actor.erase", actor_ref=actor.ref, scope=actor.scope.token) as change:
        if not principal.is_human or not can_administer(principal, actor.scope):
            raise Forbidden(f"you do not administer {actor.scope.token}")
        # FOR UPDATE on the actor (and its scope) conflicts with the FOR KEY SHARE that every
        # insert of a digest, a thread or a memory at the scope takes on them: no turn, new
        # conversation or memory lands half-way through; one that waited is a new history.
        actor = Actor.objects.select_related("scope").select_for_update().get(pk=actor.pk)
        republished, memories, versions = _forget_memories(change, actor)
        digests, lines = _scrub_turns(actor)
        threads, messages = _delete_transcripts(actor)
        api_keys = _revoke_keys(change, actor)
        actor.display_name = ""
        actor.save(update_fields=["display_name"])
        erased = Erased(
            memories=len(memories),
            versions=len(versions),
            digests=digests,
            lines=lines,
            threads=threads,
            messages=messages,
            api_keys=api_keys,
            republished=republished,
        )
        change.event("actor.erased", actor.scope, erased.as_dict(), actor.ref)
        change.log(200, memory_ids=sorted(versions), count=len(versions), detail=erased.as_dict())
    return erased


def _forget_memories(change, actor: Actor) -> tuple[int, set, set[str]]:
    """Forget every memory at the actor's scope or written by its agent anywhere (an agent
    writes only at its own scope; the second half is belt and braces)."""
    held = Memory.objects.filter(Q(scope=actor.scope) | Q(origin_actor=actor))
    lineages = set(held.values_list("lineage", flat=True))
    republished = (
        Memory.objects.filter(promoted_from__lineage__in=lineages)
        .exclude(lineage__in=lineages)
        .count()
    )
    versions: set[str] = set()
    for lineage in sorted(lineages):
        memory = Memory.objects.select_related("scope").filter(lineage=lineage).first()
        if memory is None:  # forgotten meanwhile
            continue
        versions.update(forget_lineage(change, memory).memory_ids)
    return republished, lineages, versions


def _scrub_turns(actor: Actor) -> tuple[int, int]:
    """Every stored turn of the actor loses its text: its query (what the person asked),
    its block and entries (what the agent was told), its lines. The row, its run id and
    its counts stay, so the ledger's and access log's references still resolve."""
    digests = Digest.objects.select_for_update().filter(actor=actor)
    turns = 0
    for digest in digests:
        digest.query = None
        digest.block = ""
        digest.entries = []
        digest.stats = {**digest.stats, "prompt_chars": 0}
        digest.save(update_fields=["query", "block", "entries", "stats"])
        turns += 1
    lines = DigestLine.objects.filter(digest__actor=actor).exclude(text=ERASED).update(text=ERASED)
    return turns, lines


def _delete_transcripts(actor: Actor) -> tuple[int, int]:
    # (The app role may not lock threads FOR UPDATE. A message added to one of them in
    # between the two deletes fails this change at COMMIT, on the foreign key: nothing is
    # half erased, and the erasure can be run again.)
    threads = list(Thread.objects.filter(actor=actor))
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
