"""Every way a memory comes into being: remember (agent), publish, correct, promote (people).

Each is one transaction that takes the (scope, key) lock, retires the live row it replaces
(reason `superseded`), inserts the new version in the same lineage, and appends its ledger
event; the access-log row follows. Memory text is never edited in place.
"""

from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from memory_core import audit, ledger
from memory_core.actors import ancestors, chain_of
from memory_core.errors import Forbidden, Invalid, NotFound
from memory_core.inputs import host_id_problem, require
from memory_core.locks import advisory_xact_lock
from memory_core.models import Actor, Author, Digest, Memory, RetiredReason, Scope
from memory_core.permissions import can_administer
from memory_core.scopes import fact_problem, key_problem
from memory_core.verdicts import write_verdict

MAX_TAGS = 16


@dataclass(frozen=True)
class Written:
    memory: Memory
    created: bool  # False when an idempotent repeat returned the stored record


def check_key_and_fact(key: str, text: str) -> None:
    problem = key_problem(key)
    if problem:
        raise Invalid(problem, reason="bad_key")
    problem = fact_problem(text, settings.MEMORY_MAX_FACT_CHARS)
    if problem:
        raise Invalid(problem, reason="bad_fact")


def check_tags(tags) -> list[str]:
    tags = list(dict.fromkeys(tags or ()))
    if len(tags) > MAX_TAGS:
        raise Invalid(f"at most {MAX_TAGS} tags")
    for tag in tags:
        if key_problem(tag) or len(tag) > 40:
            raise Invalid(f"tag {tag!r} must look like a key (lowercase slug, 1-40 characters)")
    return tags


def lock_slot(scope: Scope, key: str) -> Memory | None:
    """Serialise writers of one (scope, key) and return its live row, locked.

    The advisory lock covers the first write, when there is no row to lock yet.
    """
    advisory_xact_lock("memory", scope.id, key)
    # of=self and an explicit order: Memory's default ordering joins the scope table, and
    # FOR UPDATE would lock the scope row too, serialising every writer of the scope and
    # deadlocking with a concurrent commit's foreign-key check on that row.
    rows = Memory.objects.select_for_update(of=("self",)).filter(
        scope=scope, key=key, retired_at=None
    )
    return rows.order_by("pk").first()


def retire(memory: Memory, reason: str, principal, note: str = "") -> None:
    memory.retired_at = timezone.now()
    memory.retired_reason = reason
    memory.retired_by = principal.name
    memory.retired_note = note
    memory.save(update_fields=["retired_at", "retired_reason", "retired_by", "retired_note"])


def _supersede(live: Memory | None, principal, **fields) -> Memory:
    """Retire the live row (if any) and insert its successor in the same lineage.

    The retire comes first: the partial unique index allows one live row per (scope, key).
    """
    if live is not None:
        retire(live, RetiredReason.SUPERSEDED, principal)
        fields["supersedes"] = live
        fields["lineage"] = live.lineage
    return Memory.objects.create(**fields)


def remember(
    actor: Actor,
    key: str,
    fact: str,
    *,
    principal,
    run_id: str | None = None,
    tool_call_id: str | None = None,
    thread_id: str | None = None,
) -> Written:
    """The agent's write: always at the actor's own scope, authored `agent`."""
    with audit.refusals_logged(principal, "remember", actor_ref=actor.ref):
        check_key_and_fact(key, fact)
        require(
            host_id_problem(run_id, "run_id"),
            host_id_problem(tool_call_id, "tool_call_id"),
            host_id_problem(thread_id, "thread_id"),
        )
        with transaction.atomic():
            scope = actor.scope
            # A run is checked against the chain it recorded, so membership edits made
            # mid-run cannot widen (or narrow) what that run may write.
            recorded = None
            if run_id:
                recorded = (
                    Digest.objects.filter(actor=actor, run_id=run_id)
                    .values_list("chain", flat=True)
                    .first()
                )
            chain = tuple(recorded) if recorded else chain_of(actor)
            verdict = write_verdict(scope.token, chain, human=False, elevated=False)
            if not verdict.allowed:
                raise Forbidden(
                    "an agent writes only at its actor's own scope", reason=verdict.reason
                )
            live = lock_slot(scope, key)
            if run_id and tool_call_id:
                stored = (
                    Memory.objects.select_related("scope", "origin_actor", "supersedes")
                    .filter(origin_actor=actor, origin_run=run_id, origin_tool_call=tool_call_id)
                    .first()
                )
                if stored is not None:
                    written = Written(stored, created=False)
                    return _after(written, principal, actor, "remember")
            memory = _supersede(
                live,
                principal,
                scope=scope,
                key=key,
                text=fact,
                author=Author.AGENT,
                origin_actor=actor,
                origin_thread=thread_id or None,
                origin_run=run_id or None,
                origin_tool_call=tool_call_id or None,
                pinned=live.pinned if live is not None else False,
                tags=list(live.tags) if live is not None else [],
            )
            ledger.append(
                "memory.remembered",
                scope,
                principal,
                {
                    "memory": memory.uid,
                    "supersedes": live.uid if live else None,
                    "chars": len(fact),
                },
                actor_ref=actor.ref,
            )
            # Committed with the write: a worker killed after the COMMIT cannot leave a
            # memory the access log never saw.
            return _after(Written(memory, created=True), principal, actor, "remember")


def _after(written: Written, principal, actor, action: str) -> Written:
    audit.record(
        principal,
        action,
        201 if written.created else 200,
        actor_ref=actor.ref if actor else None,
        scope=written.memory.scope.token,
        memory_ids=[written.memory.uid],
        count=1,
        detail={"chars": len(written.memory.text), "created": written.created},
    )
    return written


def publish(
    scope: Scope,
    key: str,
    text: str,
    *,
    principal,
    pinned: bool = False,
    tags=(),
    expires_at=None,
) -> Memory:
    """A person's statement at a scope they administer; supersedes the live row there."""
    with audit.refusals_logged(principal, "publish", scope=scope.token):
        if not principal.is_human:
            raise Forbidden("only a person publishes; agents remember at their own scope")
        if not can_administer(principal, scope):
            raise Forbidden(f"you do not administer {scope.token}")
        check_key_and_fact(key, text)
        tags = check_tags(tags)
        with transaction.atomic():
            live = lock_slot(scope, key)
            memory = _supersede(
                live,
                principal,
                scope=scope,
                key=key,
                text=text,
                author=Author.HUMAN,
                origin_user=principal.username,
                pinned=pinned,
                tags=tags,
                expires_at=expires_at,
            )
            ledger.append(
                "memory.published",
                scope,
                principal,
                {
                    "memory": memory.uid,
                    "supersedes": live.uid if live else None,
                    "chars": len(text),
                },
            )
            _after(Written(memory, True), principal, None, "publish")
    return memory


def correct(memory: Memory, text: str, *, principal) -> Memory:
    """A person replaces a live memory's text: a new human version superseding it."""
    scope = memory.scope
    with audit.refusals_logged(principal, "correct", scope=scope.token):
        if not principal.is_human or not can_administer(principal, scope):
            raise Forbidden(f"you do not administer {scope.token}")
        check_key_and_fact(memory.key, text)
        with transaction.atomic():
            live = lock_slot(scope, memory.key)
            if live is None or live.pk != memory.pk:
                raise NotFound("that version is no longer live; reload to see the current one")
            new = _supersede(
                live,
                principal,
                scope=scope,
                key=live.key,
                text=text,
                author=Author.HUMAN,
                origin_user=principal.username,
                pinned=live.pinned,
                tags=list(live.tags),
                expires_at=live.expires_at,
            )
            ledger.append(
                "memory.corrected",
                scope,
                principal,
                {"memory": new.uid, "supersedes": live.uid, "chars": len(text)},
            )
            _after(Written(new, True), principal, None, "correct")
    return new


def promotion_targets(memory: Memory) -> list[Scope]:
    """Scopes wider than the memory's where it could be republished, narrowest first.

    For an actor's memory: the wider scopes of that actor's chain. Otherwise: the scopes
    above it in the tree.
    """
    owner = (
        getattr(memory.scope, "actor", None) if memory.scope.token.startswith("actor:") else None
    )
    if owner is not None:
        tokens = chain_of(owner)[1:]
        by_token = {s.token: s for s in Scope.objects.filter(token__in=tokens)}
        return [by_token[t] for t in tokens if t in by_token]
    return ancestors(memory.scope)[1:]


def promote(
    memory: Memory,
    target: Scope,
    *,
    principal,
    text: str | None = None,
    retire_original: bool = False,
) -> Memory:
    """Republish a memory at a wider scope: the only way a fact moves wider, and a human act."""
    with audit.refusals_logged(principal, "promote", scope=target.token):
        if not principal.is_human:
            raise Forbidden("promotion is a human act")
        if memory.retired_at is not None:
            raise NotFound("only a live memory can be republished")
        if target.pk not in {s.pk for s in promotion_targets(memory)}:
            raise Invalid(f"{target.token} is not a wider scope of {memory.scope.token}")
        if not can_administer(principal, target):
            raise Forbidden(f"you do not administer {target.token}")
        if retire_original and not can_administer(principal, memory.scope):
            raise Forbidden(f"you do not administer {memory.scope.token}")
        text = memory.text if text is None else text
        check_key_and_fact(memory.key, text)
        with transaction.atomic():
            # The source slot first (narrower before wider, the one order every writer of
            # two slots uses), and the memory re-read under it: since the caller loaded it,
            # it may have been corrected, superseded, promoted away or forgotten.
            original = lock_slot(memory.scope, memory.key)
            if original is None or original.pk != memory.pk:
                raise NotFound("only a live memory can be republished")
            live = lock_slot(target, memory.key)
            new = _supersede(
                live,
                principal,
                scope=target,
                key=memory.key,
                text=text,
                author=Author.HUMAN,
                origin_user=principal.username,
                pinned=memory.pinned or (live.pinned if live else False),
                tags=list(memory.tags),
                promoted_from=memory,
            )
            if retire_original:
                retire(original, RetiredReason.PROMOTED, principal)
            ledger.append(
                "memory.promoted",
                target,
                principal,
                {
                    "memory": new.uid,
                    "promoted_from": memory.uid,
                    "supersedes": live.uid if live else None,
                    "from_scope": memory.scope.token,
                    "retired_original": bool(retire_original),
                    "chars": len(text),
                },
            )
            _after(Written(new, True), principal, None, "promote")
    return new
