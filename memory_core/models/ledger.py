"""The ledger: an append-only, hash-chained record of every change.

One chain per stream (the top-level scope under `global`, or `global`), so tenants never
contend for one lock. Payloads carry ids, scopes, counts and lengths — never a key or text.
"""

import pgtrigger
from django.contrib.postgres.indexes import GinIndex, OpClass
from django.db import models
from django.db.models import Q
from django.db.models.fields.json import KeyTransform

from memory_core.models.guards import Protect, no_truncate
from memory_core.rules.scopes import REF_MAX_CHARS, SCOPE_MAX_CHARS


class LedgerEvent(models.Model):
    stream = models.CharField(max_length=SCOPE_MAX_CHARS)
    seq = models.BigIntegerField()
    kind = models.CharField(max_length=40)
    scope = models.CharField(max_length=SCOPE_MAX_CHARS)
    principal = models.CharField(max_length=200)
    actor_ref = models.CharField(max_length=REF_MAX_CHARS, null=True, blank=True)
    payload = models.JSONField(default=dict)
    created_at = models.DateTimeField()
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64, unique=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            # One event per position in a stream ...
            models.UniqueConstraint(fields=["stream", "seq"], name="ledger_stream_seq_unique"),
            # ... and one successor per event: a fork of the chain cannot be committed.
            models.UniqueConstraint(fields=["stream", "prev_hash"], name="ledger_no_fork"),
        ]
        indexes = [
            # The ledger page: newest first, filtered by kind, scope or principal.
            models.Index(fields=["kind", "-id"], name="ledger_kind_idx"),
            # A tenant's reader: the events of their streams, newest first.
            models.Index(fields=["stream", "-id"], name="ledger_stream_idx"),
            models.Index(fields=["scope", "-id"], name="ledger_scope_idx"),
            models.Index(fields=["principal", "-id"], name="ledger_principal_idx"),
            models.Index(fields=["created_at"], name="ledger_created_idx"),
            # Attribution and run pages: when and by whom a memory id was forgotten.
            GinIndex(
                OpClass(KeyTransform("memories", "payload"), name="jsonb_path_ops"),
                condition=Q(kind="memory.forgotten"),
                name="ledger_forgotten_memories_gin",
            ),
        ]
        triggers = [
            Protect(
                name="ledger_append_only",
                operation=pgtrigger.Update | pgtrigger.Delete,
            ),
            no_truncate("ledger_no_truncate", "the ledger is append-only"),
        ]

    def __str__(self):
        return f"{self.stream}#{self.seq} {self.kind}"
