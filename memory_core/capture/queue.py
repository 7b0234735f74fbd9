"""The capture queue: threads waiting for an extraction, and the worker that drains it.

Jobs are rows of memory_core_capturejob, one per thread at most. They are queued

- when a message arrives and MEMORY_EXTRACT_EVERY of them wait past the thread's watermark
  (`maybe_enqueue`, one statement inside the message's own transaction: the request only
  queues, the model is never asked inside it, so a turn's or a message's latency does not
  depend on the model);
- by `import_conversations --extract`, for each imported thread;
- again by the worker when a slice was read and more messages wait.

Workers (`manage.py capture_worker`, any number, on any machine) claim the oldest job due
with FOR UPDATE SKIP LOCKED and a lease: the claim commits at once, so no transaction stays
open while the model is asked. A worker that dies (kill -9 included) commits nothing more:
its extraction is one transaction that either committed whole or not at all, and its job is
claimed again when the lease runs out; the watermark check makes a repeat of a range that
did commit write nothing. A failed attempt waits out a backoff (`not_before`) and is tried
again; a job for an erased actor is dropped.
"""

import logging
import os
import socket
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from memory_core.accounts.principals import Principal
from memory_core.capture import extractor
from memory_core.capture.service import extract_thread
from memory_core.errors import DomainError, Gone, NotFound, Unavailable
from memory_core.models import Actor, CaptureJob
from memory_core.models.capture import QueueReason, Trigger

logger = logging.getLogger(__name__)

# The worker's name in the ledger and the access log.
WORKER = "capture:worker"
# A failed job waits this long, doubled with each attempt, at most MAX_BACKOFF.
MIN_BACKOFF = timedelta(seconds=5)
MAX_BACKOFF = timedelta(hours=1)

# One statement: the job, unless one is queued already, and only when `every` messages wait
# past the watermark. The count stops at `every` (LIMIT) and walks message_thread_id_idx
# from the watermark, which extraction_watermark_idx finds: its cost does not grow with the
# thread.
ENQUEUE_WHEN_DUE = """
    INSERT INTO memory_core_capturejob
        (actor_id, thread_ref, reason, queued_at, not_before, attempts, last_error, locked_by)
    SELECT %(actor)s, %(ref)s, %(reason)s, clock_timestamp(), clock_timestamp(), 0, '', ''
    WHERE (
        SELECT count(*) FROM (
            SELECT 1 FROM memory_core_message m
            WHERE m.thread_id = %(thread)s AND m.id > coalesce((
                SELECT e.last_message_id FROM memory_core_extraction e
                WHERE e.actor_id = %(actor)s AND e.thread_ref = %(ref)s AND e.outcome = 'done'
                ORDER BY e.id DESC LIMIT 1
            ), 0)
            LIMIT %(every)s
        ) waiting
    ) >= %(every)s
    ON CONFLICT (actor_id, thread_ref) DO NOTHING
"""

# The oldest job due that no live lease holds, claimed for `lease` seconds. (The clock, not
# now(): the time the transaction began, which a caller's open transaction would hold still.)
CLAIM = """
    UPDATE memory_core_capturejob j
    SET locked_until = clock_timestamp() + make_interval(secs => %(lease)s), locked_by = %(worker)s
    WHERE j.id = (
        SELECT id FROM memory_core_capturejob
        WHERE not_before <= clock_timestamp()
          AND (locked_until IS NULL OR locked_until < clock_timestamp())
        ORDER BY not_before, id
        FOR UPDATE SKIP LOCKED
        LIMIT 1
    )
    RETURNING j.id
"""


def automatic() -> bool:
    return extractor.enabled() and settings.MEMORY_EXTRACT_EVERY > 0


def maybe_enqueue(thread) -> None:
    """Queue the thread's extraction when MEMORY_EXTRACT_EVERY messages wait (called in the
    transaction that recorded a message; costs nothing when capture is not automatic)."""
    if not automatic():
        return
    with connection.cursor() as cursor:
        cursor.execute(
            ENQUEUE_WHEN_DUE,
            {
                "actor": thread.actor_id,
                "ref": thread.ref,
                "thread": thread.pk,
                "reason": QueueReason.EVERY,
                "every": settings.MEMORY_EXTRACT_EVERY,
            },
        )


def enqueue(actor: Actor, thread_ref: str, reason: str = QueueReason.IMPORT) -> bool:
    """Queue the thread now (unless it is queued already); True when a job was added."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO memory_core_capturejob
                (actor_id, thread_ref, reason, queued_at, not_before, attempts, last_error,
                 locked_by)
            VALUES (%s, %s, %s, clock_timestamp(), clock_timestamp(), 0, '', '')
            ON CONFLICT (actor_id, thread_ref) DO NOTHING
            """,
            [actor.pk, thread_ref, reason],
        )
        return cursor.rowcount == 1


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def claim(name: str) -> CaptureJob | None:
    """Claim the oldest job due (committed at once: the lease, not a transaction, holds it)."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(CLAIM, {"lease": extractor.lease_seconds(), "worker": name})
        row = cursor.fetchone()
    if row is None:
        return None
    return CaptureJob.objects.select_related("actor__scope").get(pk=row[0])


def run_job(job: CaptureJob, name: str) -> str:
    """Extract the claimed job's thread; returns what became of the job: done, more (a
    slice read, more waiting), failed (waits out its backoff), dropped (nothing to do)."""
    principal = Principal.system(WORKER)
    try:
        result = extract_thread(
            job.actor, job.thread_ref, principal=principal, trigger=Trigger.WORKER
        )
    except Unavailable as error:
        _retry_later(job, name, error.reason)
        return "failed"
    except (Gone, NotFound) as error:
        # An erased actor, or a thread pruned away: nothing will ever be read.
        logger.info("capture job for %s dropped: %s", job.actor.ref, error.reason)
        _finish(job, name)
        return "dropped"
    except DomainError as error:  # extraction turned off meanwhile (Conflict): keep it
        _retry_later(job, name, error.reason)
        return "failed"
    if result.more:
        _requeue(job, name)
        return "more"
    _finish(job, name)
    return "done"


def _mine(job: CaptureJob, name: str):
    """The job's row while this worker still holds its lease (a worker whose lease ran out
    leaves the row to whoever claimed it since)."""
    return CaptureJob.objects.filter(pk=job.pk, locked_by=name)


def _finish(job: CaptureJob, name: str) -> None:
    _mine(job, name).delete()


def _requeue(job: CaptureJob, name: str) -> None:
    _mine(job, name).update(
        reason=QueueReason.MORE,
        not_before=timezone.now(),
        attempts=0,
        last_error="",
        locked_until=None,
        locked_by="",
    )


def backoff(attempts: int) -> timedelta:
    return min(MIN_BACKOFF * 2 ** max(attempts - 1, 0), MAX_BACKOFF)


def _retry_later(job: CaptureJob, name: str, reason: str) -> None:
    attempts = job.attempts + 1
    cooldown = timedelta(seconds=extractor.cooling_down())
    _mine(job, name).update(
        attempts=attempts,
        last_error=reason[:32],
        not_before=timezone.now() + max(backoff(attempts), cooldown),
        locked_until=None,
        locked_by="",
    )


def drain(*, name: str | None = None, limit: int | None = None) -> dict[str, int]:
    """Run due jobs until none is due (or `limit` jobs ran); counts by what became of them."""
    name = name or worker_name()
    counts: dict[str, int] = {}
    ran = 0
    while limit is None or ran < limit:
        job = claim(name)
        if job is None:
            break
        outcome = run_job(job, name)
        counts[outcome] = counts.get(outcome, 0) + 1
        ran += 1
    return counts


def depth() -> dict[str, int]:
    """Jobs queued, and of them those waiting out a failure's backoff."""
    jobs = CaptureJob.objects.all()
    return {"queued": jobs.count(), "retrying": jobs.filter(attempts__gt=0).count()}
