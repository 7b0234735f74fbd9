"""`restore_check BACKUP [--checkpoint FILE] [--public-key FILE]`: the drill that proves a
backup — restore it into a scratch server, verify its ledger against the latest signed
checkpoint there, report the restored heads. Exit 0 when it holds, 1 when it does not."""

import subprocess
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from memory_console import backup
from memory_core.errors import Invalid
from memory_core.ledger import checkpoints


class Command(BaseCommand):
    help = (
        "Restore BACKUP (from `backup`) into a scratch PostgreSQL in a temporary data "
        "directory, run verify_ledger --checkpoint there against the latest checkpoint "
        "(--checkpoint FILE, default the newest in LEDGER_CHECKPOINT_DIR) and public key "
        "(--public-key FILE, default LEDGER_PUBLIC_KEY), report the restored heads, and "
        "remove the scratch server. Exit 1 if the restore or the verification fails."
    )

    def add_arguments(self, parser):
        parser.add_argument("backup", metavar="BACKUP")
        parser.add_argument("--checkpoint", metavar="FILE")
        parser.add_argument("--public-key", metavar="FILE")

    def handle(self, *args, **options):
        checkpoint = options["checkpoint"] or checkpoints.latest_file(
            settings.LEDGER_CHECKPOINT_DIR
        )
        if not checkpoint:
            raise CommandError(
                f"no checkpoint in {settings.LEDGER_CHECKPOINT_DIR}: pass --checkpoint FILE"
            )
        public_key = options["public_key"] or settings.LEDGER_PUBLIC_KEY
        if not public_key:
            raise CommandError("no public key: pass --public-key FILE or set LEDGER_PUBLIC_KEY")
        self.stdout.write(f"checkpoint: {checkpoint}")

        def say(text):
            self.stderr.write(text)

        try:
            result = backup.restore_check(
                Path(options["backup"]), Path(checkpoint), Path(public_key), say=say
            )
        except Invalid as error:
            raise CommandError(error.message) from None
        except subprocess.CalledProcessError as error:
            self.stderr.write(f"restore failed: {(error.stderr or '').strip()}")
            raise SystemExit(1) from None
        self.stdout.write(
            "restored: " + ", ".join(f"{n} {label}" for label, n in result.counts.items())
        )
        self.stdout.write("restored heads:")
        for stream, seq, sealed, count in result.heads:
            self.stdout.write(f"  {stream} seq {seq} {sealed} ({count} events)")
        self.stdout.write(result.verify_output)
        if not result.ok:
            self.stderr.write("drill FAILED: the restored ledger does not hold the checkpoint")
            raise SystemExit(1)
        self.stdout.write("drill ok: the backup restores and its ledger holds the checkpoint")
