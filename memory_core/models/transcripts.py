"""Conversation transcripts posted by hosts, so auditors can follow a memory to its origin.

Pruning them never touches memories: a memory's origin is a pointer allowed to dangle.
"""

from django.db import models

from memory_core.models.guards import erased_actor_guard
from memory_core.rules.ids import message_id


class Thread(models.Model):
    actor = models.ForeignKey("memory_core.Actor", on_delete=models.PROTECT, related_name="threads")
    # The host's own thread id; unique per actor, since two hosts may both call theirs "t1".
    ref = models.CharField(max_length=128)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["actor", "ref"], name="thread_actor_ref_unique"),
        ]
        indexes = [
            # The console's /threads/<thread_id>/ looks threads up by the host's id.
            models.Index(fields=["ref"], name="thread_ref_idx"),
            # The conversations list (/threads/?actor=) pages one actor's threads newest
            # first by id cursor; the unfiltered list walks the primary key.
            models.Index(fields=["actor", "-id"], name="thread_actor_recent_idx"),
        ]
        triggers = [
            erased_actor_guard(
                "thread_not_of_erased_actor", "FROM memory_core_actor a WHERE a.id = NEW.actor_id"
            ),
        ]

    def __str__(self):
        return self.ref


class Role(models.TextChoices):
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


class Message(models.Model):
    uid = models.CharField(max_length=40, unique=True, default=message_id, editable=False)
    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="messages")
    run_id = models.CharField(max_length=128, null=True, blank=True)
    role = models.CharField(max_length=16, choices=Role.choices)
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [
            # Transcript pages and pruning read a thread's messages newest-first.
            models.Index(fields=["thread", "-created_at", "-id"], name="message_thread_recent_idx"),
            # Attribution highlights the messages of one run inside a thread.
            models.Index(fields=["thread", "run_id"], name="message_thread_run_idx"),
            # Capture reads a thread's messages after its watermark (a message id), and the
            # automatic queue counts them when a message arrives (memory_core/capture/).
            models.Index(fields=["thread", "id"], name="message_thread_id_idx"),
        ]
        triggers = [
            erased_actor_guard(
                "message_not_of_erased_actor",
                "FROM memory_core_thread t JOIN memory_core_actor a ON a.id = t.actor_id"
                " WHERE t.id = NEW.thread_id",
            ),
        ]
