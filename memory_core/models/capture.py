"""Capture: the queue of threads waiting for an extraction, and the record of each one.

An extraction reads a slice of a thread's messages (those after its watermark) and writes
what the model found through `remember`. Its record is append-only and holds ids and counts
only, never a key or a text: which messages it read (by id), which memory versions it wrote
or found unchanged (by id), how many items it dropped and why. A thread's watermark is the
last message read by its newest completed extraction, so there is no watermark row to keep
in step: the records are the watermark.
"""

import pgtrigger
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q

from memory_core.models.guards import Protect, erased_actor_guard
from memory_core.rules.ids import extraction_id
from memory_core.rules.inputs import HOST_ID_MAX


class Trigger(models.TextChoices):
    API = "api"  # POST /threads/{id}/extract
    CONSOLE = "console"  # a person's "Extract now" on the conversation page
    WORKER = "worker"  # a queued job (MEMORY_EXTRACT_EVERY, import_conversations --extract)


class Outcome(models.TextChoices):
    DONE = "done"
    FAILED = "failed"


class QueueReason(models.TextChoices):
    EVERY = "every"  # MEMORY_EXTRACT_EVERY new messages arrived
    IMPORT = "import"  # import_conversations --extract
    MORE = "more"  # a slice was read and more messages wait


class CaptureJob(models.Model):
    """A thread waiting for an extraction. Workers claim one with FOR UPDATE SKIP LOCKED and
    a lease (`locked_until`): a worker that dies leaves the job to be claimed again when its
    lease runs out, and nothing it had not committed is on record."""

    actor = models.ForeignKey("memory_core.Actor", on_delete=models.PROTECT, related_name="+")
    thread_ref = models.CharField(max_length=HOST_ID_MAX)
    reason = models.CharField(max_length=8, choices=QueueReason.choices)
    queued_at = models.DateTimeField(auto_now_add=True)
    # Not claimed before this (a failed attempt waits out its backoff).
    not_before = models.DateTimeField()
    attempts = models.PositiveIntegerField(default=0)
    # The last failure's reason code (unreachable, refused, malformed), never its text.
    last_error = models.CharField(max_length=32, blank=True, default="")
    locked_until = models.DateTimeField(null=True, blank=True)
    locked_by = models.CharField(max_length=200, blank=True, default="")

    class Meta:
        constraints = [
            # One waiting job per thread: a new message finds it queued and adds nothing
            # (INSERT ... ON CONFLICT DO NOTHING, capture/queue.py).
            models.UniqueConstraint(
                fields=["actor", "thread_ref"], name="capturejob_one_per_thread"
            ),
        ]
        indexes = [
            # A worker's claim: the oldest job due.
            models.Index(fields=["not_before", "id"], name="capturejob_due_idx"),
        ]
        triggers = [
            # Nothing is queued for a person being erased (models/guards.py).
            erased_actor_guard(
                "capturejob_not_of_erased_actor",
                "FROM memory_core_actor a WHERE a.id = NEW.actor_id",
            ),
        ]


class Extraction(models.Model):
    uid = models.CharField(max_length=40, unique=True, default=extraction_id, editable=False)
    actor = models.ForeignKey("memory_core.Actor", on_delete=models.PROTECT, related_name="+")
    thread_ref = models.CharField(max_length=HOST_ID_MAX)
    trigger = models.CharField(max_length=8, choices=Trigger.choices)
    # The ledger's and access log's name of who asked (a key, a person, the worker).
    principal = models.CharField(max_length=200)
    outcome = models.CharField(max_length=8, choices=Outcome.choices)
    # A failure's reason code (unreachable, refused, malformed); "" when done.
    reason = models.CharField(max_length=32, blank=True, default="")
    # The watermark it started after (0: the thread's first message) and the last message
    # it read: message primary keys, which order a thread's messages as they were posted.
    after_message_id = models.BigIntegerField(default=0)
    last_message_id = models.BigIntegerField(null=True, blank=True)
    last_message_uid = models.CharField(max_length=40, blank=True, default="")
    last_run_id = models.CharField(max_length=HOST_ID_MAX, null=True, blank=True)
    messages = models.PositiveIntegerField(default=0)
    written = ArrayField(models.CharField(max_length=40), default=list, blank=True)
    unchanged = ArrayField(models.CharField(max_length=40), default=list, blank=True)
    dropped = models.PositiveIntegerField(default=0)
    # Dropped items by reason code (shape, bad_key, bad_fact, secret, duplicate_key, ...).
    dropped_reasons = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            # A range of a thread is extracted once: two extractions that read from the same
            # watermark (two workers, a retry beside the API) cannot both complete.
            models.UniqueConstraint(
                fields=["actor", "thread_ref", "after_message_id"],
                condition=Q(outcome="done"),
                name="extraction_once_per_range",
            ),
            # A failed extraction wrote nothing; a completed one says how far it read.
            models.CheckConstraint(
                condition=Q(outcome="failed", written=[], unchanged=[])
                | Q(outcome="done", reason="", last_message_id__isnull=False),
                name="extraction_outcome_consistent",
            ),
        ]
        indexes = [
            # A thread's watermark (its newest completed extraction), read by every
            # extraction and by the automatic queue when a message arrives.
            models.Index(
                fields=["actor", "thread_ref", "-id"],
                condition=Q(outcome="done"),
                name="extraction_watermark_idx",
            ),
            # The conversation page lists a thread's extractions, failed ones too.
            models.Index(
                fields=["actor", "thread_ref", "-created_at"], name="extraction_thread_idx"
            ),
            # The dashboard's last failure.
            models.Index(
                fields=["-id"], condition=Q(outcome="failed"), name="extraction_failed_idx"
            ),
        ]
        triggers = [
            # A record is evidence of what capture did: never changed, never removed.
            Protect(name="extraction_append_only", operation=pgtrigger.Update | pgtrigger.Delete),
            erased_actor_guard(
                "extraction_not_of_erased_actor",
                "FROM memory_core_actor a WHERE a.id = NEW.actor_id",
            ),
        ]
