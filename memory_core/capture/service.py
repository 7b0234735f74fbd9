"""Capture: one extraction of a thread's new messages, written through `remember`.

An extraction reads the messages of one thread of one actor that come after the thread's
watermark (the last message its newest completed extraction read), at most a slice of them
(rules/capture.py), asks the configured model what a careful agent would remember, and
writes each item it may write through writes.remember, the agent's own write: at the
actor's own scope, authored `agent`, a same-key fact superseding, the same fact again no
change, origin the thread and the run of the last message read (the record names the
message itself). It never deletes or invalidates anything, and nothing an answer says can
make it write anywhere else: the model only ever supplies keys and facts.

Shape of the change. The model is asked outside any transaction (a slow model holds no lock
and no connection state). Then one audited change (changes.audited), under an advisory
lock on the thread: the watermark is read again, and if another extraction completed the
same range meanwhile nothing is written; otherwise every item's `remember` (each its own
ledger event and access-log row, tagged with the extraction), the extraction's record (ids
and counts), its `capture.extracted` ledger event (counts only, never text) and its
access-log row commit together, or none of them does. A range completes once
(extraction_once_per_range): a retry, a second worker or a repeated API call finds the
watermark moved and writes nothing.

A failure to use the model writes nothing but a failed record (for the dashboard) and the
access-log row of the refusal (503); the watermark does not move, so the same messages are
read again next time.
"""

import math
from dataclasses import dataclass, field

from django.conf import settings

from memory_core import writes
from memory_core.accounts.permissions import can_administer
from memory_core.capture import extractor
from memory_core.changes import audited, erased_as_gone, in_extraction
from memory_core.db.locks import advisory_xact_lock
from memory_core.errors import Conflict, DomainError, Forbidden, Gone, NotFound, Unavailable
from memory_core.ledger import access_log
from memory_core.models import Actor, Extraction, Memory, Message, Thread
from memory_core.models.capture import Outcome
from memory_core.rules import capture as rules
from memory_core.rules.ids import extraction_id

ACTION = "extract"


@dataclass(frozen=True)
class Extracted:
    """What one extraction did: the memory versions it wrote, how many items were already
    known (same key, same fact) and how many were dropped, the watermark after it (a
    message id, None when the thread has no completed extraction) and whether messages
    past this slice still wait."""

    written: list[Memory] = field(default_factory=list)
    unchanged: int = 0
    dropped: int = 0
    watermark: str | None = None
    more: bool = False
    record: Extraction | None = None


def watermark(actor: Actor, thread_ref: str) -> Extraction | None:
    """The thread's newest completed extraction (extraction_watermark_idx)."""
    return (
        Extraction.objects.filter(actor=actor, thread_ref=thread_ref, outcome=Outcome.DONE)
        .order_by("-id")
        .first()
    )


def _after(mark: Extraction | None) -> int:
    """The id of the last message a watermark read (0: none yet)."""
    return (mark.last_message_id or 0) if mark is not None else 0


def require_enabled() -> extractor.Http:
    model = extractor.current()
    if model is None:
        raise Conflict("extraction is off on this server (MEMORY_EXTRACTOR=none)")
    return model


def require_may_extract(principal, actor: Actor) -> None:
    """An agent's key extracts for the actors it reaches (its look-up decided that); a
    person needs to administer the actor's scope (an auditor changes nothing); an erased
    actor is written for by no one."""
    if principal.kind == "user" and not can_administer(principal, actor.scope):
        raise Forbidden(f"you do not administer {actor.scope.token}")
    if actor.erased_at is not None:
        raise Gone(f"actor {actor.ref!r} was erased")


def extract_thread(actor: Actor, thread_ref: str, *, principal, trigger: str) -> Extracted:
    """Extract one slice of the thread's messages past its watermark (see the module)."""
    scope = actor.scope.token
    with access_log.refusals_logged(principal, ACTION, actor_ref=actor.ref, scope=scope):
        model = require_enabled()
        require_may_extract(principal, actor)
        thread = Thread.objects.filter(actor=actor, ref=thread_ref).first()
        if thread is None:
            raise NotFound(f"thread {thread_ref!r} not found")
        mark = watermark(actor, thread_ref)
        after = _after(mark)
        pending = list(
            Message.objects.filter(thread=thread, id__gt=after)
            .order_by("id")
            .only("id", "uid", "run_id", "role", "text")[: rules.SLICE_MESSAGES + 1]
        )
        if not pending:
            access_log.record(
                principal, ACTION, 200, actor_ref=actor.ref, scope=scope, detail={"messages": 0}
            )
            return Extracted(watermark=mark.last_message_uid if mark is not None else None)
        n = rules.slice_end(
            [len(m.text) for m in pending],
            max_messages=rules.SLICE_MESSAGES,
            max_chars=rules.SLICE_CHARS,
        )
        read, more = pending[:n], len(pending) > n
        items = _ask(model, actor, thread_ref, read, principal=principal, trigger=trigger)
        return _write(actor, thread, after, read, items, more, principal=principal, trigger=trigger)


def _ask(model, actor: Actor, thread_ref: str, read, *, principal, trigger: str) -> list:
    """The items of the model's answer; Unavailable (nothing written) when it cannot be
    used, after writing the failure's record."""
    waiting = extractor.cooling_down()
    if waiting > 0:
        # Not asked, so no failure to record: the refusal's access-log row says it.
        raise Unavailable(
            "the extractor failed a moment ago and is left alone until it cools down",
            retry_after=math.ceil(waiting),
            reason=extractor.UNREACHABLE,
        )
    body = rules.chat_request(
        model.model,
        rules.system_prompt(settings.MEMORY_EXTRACT_MAX, settings.MEMORY_MAX_FACT_CHARS),
        rules.user_prompt(_known(actor), [(m.role, _clipped(m.text)) for m in read]),
        max_items=settings.MEMORY_EXTRACT_MAX,
    )
    try:
        return rules.memories_in(model.complete(body))
    except rules.AnswerProblem as problem:
        error = extractor.ExtractorError(extractor.MALFORMED, str(problem))
    except extractor.ExtractorError as failure:
        error = failure
    extractor.failed(error)
    _failed(actor, thread_ref, error.reason, principal, trigger)
    message = {
        extractor.UNREACHABLE: "the extractor's model cannot be reached",
        extractor.REFUSED: "the extractor's model refused the request (its URL, model or key)",
        extractor.MALFORMED: 'the extractor\'s answer was not {"memories": [...]}',
    }[error.reason]
    retry = max(1, math.ceil(settings.MEMORY_EXTRACTOR_COOLDOWN))
    raise Unavailable(f"{message}; nothing was written", retry_after=retry, reason=error.reason)


def _known(actor: Actor) -> list[tuple[str, str]]:
    """The actor's live memories at its own scope, newest first (their keys are offered for
    reuse). Only its own scope: nothing wider, nothing of anyone else."""
    rows = (
        Memory.objects.live()
        .filter(scope=actor.scope)
        .order_by("-created_at")
        .values_list("key", "text")[: rules.KNOWN_MEMORIES]
    )
    return list(rows)


def _clipped(text: str) -> str:
    if len(text) <= rules.SLICE_CHARS:
        return text
    return text[: rules.SLICE_CHARS] + " …"


def _failed(actor: Actor, thread_ref: str, reason: str, principal, trigger: str) -> None:
    """The record of a failed extraction (no text, no counts): the dashboard's last failure.
    (Refused by the database, as a 410, for an actor whose erasure began meanwhile.)"""
    with erased_as_gone(actor.ref):
        Extraction.objects.create(
            actor=actor,
            thread_ref=thread_ref,
            trigger=trigger,
            principal=principal.name,
            outcome=Outcome.FAILED,
            reason=reason,
        )


def _write(actor: Actor, thread: Thread, after: int, read, items, more, *, principal, trigger):
    uid = extraction_id()
    selection = rules.select_items(
        items, settings.MEMORY_EXTRACT_MAX, settings.MEMORY_MAX_FACT_CHARS
    )
    last = read[-1]
    scope = actor.scope
    with (
        in_extraction(uid),
        audited(principal, ACTION, actor_ref=actor.ref, scope=scope.token) as change,
    ):
        advisory_xact_lock("capture", actor.pk, thread.ref)
        mark = watermark(actor, thread.ref)
        if _after(mark) != after:
            # Another extraction completed this range while the model was asked.
            change.log(200, detail={"messages": 0, "already": True})
            return Extracted(watermark=mark.last_message_uid if mark is not None else None)
        written: list[Memory] = []
        unchanged: list[Memory] = []
        reasons = dict(selection.dropped)
        for key, fact in selection.items:
            try:
                result = writes.remember(
                    actor,
                    key,
                    fact,
                    principal=principal,
                    run_id=last.run_id,
                    thread_id=thread.ref,
                    same_fact_unchanged=True,
                )
            except Gone:
                raise
            except DomainError as refused:  # the same rules remember applies: dropped
                reasons[refused.reason] = reasons.get(refused.reason, 0) + 1
                continue
            (written if result.created else unchanged).append(result.memory)
        dropped = sum(reasons.values())
        record = Extraction.objects.create(
            uid=uid,
            actor=actor,
            thread_ref=thread.ref,
            trigger=trigger,
            principal=principal.name,
            outcome=Outcome.DONE,
            after_message_id=after,
            last_message_id=last.id,
            last_message_uid=last.uid,
            last_run_id=last.run_id,
            messages=len(read),
            written=[m.uid for m in written],
            unchanged=[m.uid for m in unchanged],
            dropped=dropped,
            dropped_reasons=reasons,
        )
        counts = {
            "messages": len(read),
            "written": len(written),
            "unchanged": len(unchanged),
            "dropped": dropped,
        }
        change.event(
            "capture.extracted",
            scope,
            {"extraction": uid, "message": last.uid, **counts, "memories": record.written},
            actor_ref=actor.ref,
        )
        change.log(
            200,
            memory_ids=[*record.written, *record.unchanged],
            count=len(written),
            detail=counts,
        )
    return Extracted(
        written=written,
        unchanged=len(unchanged),
        dropped=dropped,
        watermark=last.uid,
        more=more,
        record=record,
    )
