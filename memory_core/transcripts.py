"""Conversation transcripts: recording messages, and pruning old ones.

Pruning never touches memories: a memory learned in a pruned thread keeps its origin
fields, and every surface reports "origin no longer resolves" instead of failing.
"""

from django.db import InterfaceError, OperationalError, connection, transaction

from memory_core.actors import global_scope
from memory_core.capture import queue as capture_queue
from memory_core.changes import audited
from memory_core.db import outcome
from memory_core.errors import Invalid
from memory_core.models import Actor, LedgerEvent, Message, Thread
from memory_core.models.transcripts import Role
from memory_core.rules.inputs import host_id_problem, require, text_problem

MAX_MESSAGE_CHARS = 100_000

# What a turn's thread id leads to. A thread row exists from its first message on (turns
# create none) and leaves only when a prune empties it, so a thread id with no row either
# never had a message recorded or was pruned away; only a prune that removed threads
# after the turn can have done the latter.
THREAD_NONE = "none"  # the turn named no thread
THREAD_STORED = "stored"  # its messages are stored: the conversation page shows them
THREAD_NOT_RECORDED = "not_recorded"  # no message of it was ever recorded
THREAD_PRUNED = "pruned"  # no longer stored: a prune since the turn removed it
THREAD_ERASED = "erased"  # its person was erased, and their conversations with them


def thread_state(thread_ref, *, stored: bool, turn_at, last_prune_at, erased_at=None) -> str:
    """Where a turn's thread stands, from whether its row exists, when the turn was stored,
    when a prune last removed threads (None: never) and when its actor was erased (None:
    never)."""
    if not thread_ref:
        return THREAD_NONE
    if stored:
        return THREAD_STORED
    if erased_at is not None:
        return THREAD_ERASED
    if last_prune_at is not None and last_prune_at >= turn_at:
        return THREAD_PRUNED
    return THREAD_NOT_RECORDED


def last_thread_prune():
    """When a prune last removed whole threads, or None (ledger_kind_idx serves it)."""
    return (
        LedgerEvent.objects.filter(kind="history.pruned", payload__threads__gt=0)
        .order_by("-id")
        .values_list("created_at", flat=True)
        .first()
    )


def thread_states(digests) -> dict[int, str]:
    """digest id -> its thread's state, in two queries whatever the number of digests."""
    named = [d for d in digests if d.thread_ref]
    stored = set()
    if named:
        stored = set(
            Thread.objects.filter(
                actor_id__in={d.actor_id for d in named}, ref__in={d.thread_ref for d in named}
            ).values_list("actor_id", "ref")
        )
    missing = any((d.actor_id, d.thread_ref) not in stored for d in named)
    last_prune = last_thread_prune() if missing else None
    return {
        d.id: thread_state(
            d.thread_ref,
            stored=(d.actor_id, d.thread_ref) in stored,
            turn_at=d.created_at,
            last_prune_at=last_prune,
            erased_at=d.actor.erased_at,
        )
        for d in digests
    }


def record_message(
    actor: Actor, thread_ref: str, role: str, text: str, *, principal, run_id: str | None = None
) -> Message:
    """A message has no idempotency key, so a caller retries it only after a 503 (nothing
    was written). When the connection fails once its statements have run, at the commit
    (the primary lost mid-commit), the message is looked up until a primary answers
    (db/outcome.py): stored, it is the answer; absent, the 503 stands; no answer in time,
    OutcomeUnknown (504)."""
    written = None
    try:
        with audited(principal, "message", actor_ref=actor.ref) as change:
            require(
                host_id_problem(thread_ref or "", "thread_id"),
                host_id_problem(run_id, "run_id"),
                text_problem(text, "text", MAX_MESSAGE_CHARS),
            )
            if role not in Role.values:
                raise Invalid(f"role must be one of {', '.join(Role.values)}")
            thread, _ = Thread.objects.get_or_create(actor=actor, ref=thread_ref)
            message = Message.objects.create(thread=thread, run_id=run_id, role=role, text=text)
            # Capture's automatic queue (MEMORY_EXTRACT_EVERY): queued here, extracted by a
            # worker, never inside this request.
            capture_queue.maybe_enqueue(thread)
            change.log(201, count=1, detail={"chars": len(text), "role": role})
            written = message
    except (OperationalError, InterfaceError):
        if written is None or connection.in_atomic_block:
            raise  # failed before its commit (rolled back), or the commit is the caller's
        if not outcome.stored(Message.objects.filter(uid=written.uid).exists):
            raise
    return written


_PRUNE_MESSAGES = """
    DELETE FROM memory_core_message
    WHERE id IN (
        SELECT id FROM (
            SELECT id, row_number() OVER (
                PARTITION BY thread_id ORDER BY created_at DESC, id DESC
            ) AS position
            FROM memory_core_message
            WHERE thread_id = ANY(%s)
        ) ranked
        WHERE position > %s
    )
"""

_PRUNE_THREADS = """
    DELETE FROM memory_core_thread t
    WHERE t.id = ANY(%s)
      AND NOT EXISTS (SELECT 1 FROM memory_core_message m WHERE m.thread_id = t.id)
"""


def prune_history(max_messages: int, *, principal, batch_size: int = 500, progress=None):
    """Keep at most the `max_messages` newest messages per thread; drop emptied threads.

    Works in batches of threads, one transaction each, so a large prune neither holds long
    locks nor loses all its work to one failure. Returns (messages, threads) deleted.
    """
    if max_messages < 0:
        raise Invalid("--max-messages must be 0 or more")
    messages = threads = 0
    last_id = 0
    while True:
        batch = list(
            Thread.objects.filter(id__gt=last_id)
            .order_by("id")
            .values_list("id", flat=True)[:batch_size]
        )
        if not batch:
            break
        last_id = batch[-1]
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(_PRUNE_MESSAGES, [batch, max_messages])
            messages += cursor.rowcount
            cursor.execute(_PRUNE_THREADS, [batch])
            threads += cursor.rowcount
        if progress is not None:
            progress(len(batch))
    # The batches commit one by one (no long locks); their summary is one change of its
    # own. A prune cut short has deleted its finished batches without that summary: the
    # ledger and the access log then show only what a rerun removes.
    with audited(principal, "prune_history") as change:
        change.event(
            "history.pruned",
            global_scope(),
            {"messages": messages, "threads": threads, "count": max_messages},
        )
        change.log(200, count=messages, detail={"threads": threads})
    return messages, threads
