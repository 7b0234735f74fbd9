"""Digests: what one run (one agent turn) was given, kept for replay and attribution."""

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import F, Func, Q, Value

from memory_core.models.guards import erased_actor_guard
from memory_core.rules.ids import digest_id
from memory_core.rules.scopes import SCOPE_MAX_CHARS


class Digest(models.Model):
    uid = models.CharField(max_length=40, unique=True, default=digest_id, editable=False)
    # No index of its own: digest_one_per_actor_run and digest_actor_recent_idx both lead
    # with actor, and every turn pays for each index a digest row is entered in.
    actor = models.ForeignKey(
        "memory_core.Actor", on_delete=models.PROTECT, related_name="digests", db_index=False
    )
    run_id = models.CharField(max_length=128)
    thread_ref = models.CharField(max_length=128, null=True, blank=True)
    query = models.TextField(null=True, blank=True)
    chain = ArrayField(models.CharField(max_length=SCOPE_MAX_CHARS))
    block = models.TextField(blank=True, default="")
    # The entries as the API returned them (memory shapes with overrides), for replay.
    entries = models.JSONField(default=list)
    stats = models.JSONField(default=dict)
    # Copied out of stats: the number operators alert on, indexed below.
    pinned_omitted = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            # Determinism: one stored digest per (actor, run); a repeat returns it.
            models.UniqueConstraint(fields=["actor", "run_id"], name="digest_one_per_actor_run"),
        ]
        indexes = [
            models.Index(fields=["-created_at", "-id"], name="digest_recent_idx"),
            models.Index(fields=["actor", "-created_at"], name="digest_actor_recent_idx"),
            # Attribution ?run=: a run by its host id across actors (unique per actor only).
            models.Index(fields=["run_id"], name="digest_run_idx"),
            # Dashboard alerts: turns whose pinned memories did not all fit.
            models.Index(
                fields=["-created_at"],
                condition=Q(pinned_omitted__gt=0),
                name="digest_pinned_omitted_idx",
            ),
        ]
        triggers = [
            # No turn is stored for an erased person (models/guards.py says how it races).
            erased_actor_guard(
                "digest_not_of_erased_actor", "FROM memory_core_actor a WHERE a.id = NEW.actor_id"
            ),
        ]


class TextHash(Func):
    """`hashtextextended(text, 0)`: the 64-bit hash digestline_text_hash is built on. A
    lookup matches it and then the text itself (a hash may collide)."""

    function = "hashtextextended"
    output_field = models.BigIntegerField()

    def __init__(self, expression):
        super().__init__(expression, Value(0))


class DigestLine(models.Model):
    # Indexed by digestline_digest_n_unique, which leads with digest; a turn writes ~25
    # lines, so a second index on the column would cost every turn ~25 more entries.
    digest = models.ForeignKey(
        Digest, on_delete=models.CASCADE, related_name="lines", db_index=False
    )
    n = models.PositiveSmallIntegerField()
    text = models.TextField()
    # The memory version this line shows. Nulled when that memory is forgotten; memory_uid
    # stays so an auditor can still see that a forgotten memory was here.
    #
    # Neither a foreign-key constraint nor an index of its own: a turn writes ~30 lines,
    # and at 1m the constraint's check (one locking look-up per line at commit) and the
    # index (one entry per line) cost ~0.3 ms of PostgreSQL's time per turn, a twentieth
    # of the turn. What they gave is kept otherwise: the turn's own write locks every
    # memory it shows (`held` in turns.STORE_TURN, the same FOR KEY SHARE the check took)
    # and writes nothing when one is missing, so no line names a memory that is gone;
    # forget (the only delete of a memory) locks the versions FOR UPDATE first, waits for
    # such a turn, and nulls the lines itself, found by memory_uid.
    memory = models.ForeignKey(
        "memory_core.Memory",
        null=True,
        blank=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        db_index=False,
        related_name="digest_lines",
    )
    memory_uid = models.CharField(max_length=40)

    class Meta:
        ordering = ["digest", "n"]
        constraints = [
            models.UniqueConstraint(fields=["digest", "n"], name="digestline_digest_n_unique"),
        ]
        indexes = [
            # Forget finds every prompt-line copy of a memory; attribution finds its runs.
            models.Index(fields=["memory_uid"], name="digestline_memory_uid_idx"),
            # Attribution: a pasted prompt line is matched by equality on its exact forms
            # (with and without the "- " / "    ↳ " marker), never by a scan. A btree on
            # the text's 64-bit hash: a line may exceed btree's 2704-byte row limit, and a
            # hash index kept each distinct text in one bucket chain, which every turn
            # showing that text walked to its end (a global memory's line is in every
            # digest: 0.75 ms of a turn's write at 1m, against 0.2-0.35 ms for this).
            models.Index(TextHash(F("text")), name="digestline_text_hash"),
        ]
