"""That a signed checkpoint of the ledger was taken: when, which heads, with which key.

The checkpoint itself (memory_core/ledger/checkpoints.py) is a small signed JSON file kept outside
the database — mailed, put in a WORM bucket, notarised — because evidence an attacker with
the database's superuser password could rewrite is no evidence. The database keeps only this
record of the taking, so the dashboard can show the last checkpoint and its age and
`restore_check` can say which heads a backup should still hold. Neither the signing key nor
the signature's secret part is here: only the public key's fingerprint and the signature's
SHA-256, enough to match a file to its record.
"""

import pgtrigger
from django.db import models

from memory_core.models.guards import Protect, no_truncate


class LedgerCheckpoint(models.Model):
    taken_at = models.DateTimeField()
    # Who took it (a principal name: `cli:ledger_checkpoint`, `user:<name>`).
    principal = models.CharField(max_length=200)
    # SHA-256 (hex) of the raw Ed25519 public key that verifies the signature.
    key_id = models.CharField(max_length=64)
    # SHA-256 (hex) of the signature bytes: names this checkpoint's file without holding it.
    signature_sha256 = models.CharField(max_length=64, unique=True)
    # {stream: {"seq", "hash", "count"}}: the heads the file signs (hashes are no secret).
    heads = models.JSONField(default=dict)
    events = models.BigIntegerField()

    class Meta:
        ordering = ["-taken_at", "-id"]
        indexes = [
            # The dashboard's "last checkpoint taken": newest first, one row.
            models.Index(fields=["-taken_at", "-id"], name="checkpoint_recent_idx"),
        ]
        triggers = [
            # A record of evidence is append-only like the ledger it describes.
            Protect(
                name="checkpoint_append_only",
                operation=pgtrigger.Update | pgtrigger.Delete,
            ),
            no_truncate("checkpoint_no_truncate", "checkpoint records are append-only"),
        ]

    def __str__(self):
        return f"checkpoint {self.taken_at:%Y-%m-%d %H:%M:%S} ({self.events} events)"
