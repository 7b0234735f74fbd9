"""`backup [--out FILE]`: pg_dump the database, for the backup/restore drill."""

import subprocess
from datetime import UTC, datetime
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from memory_console import backup
from memory_core.errors import Invalid


class Command(BaseCommand):
    help = (
        "Back up the database with PostgreSQL's pg_dump (custom format), as the role that "
        "owns the tables, to FILE or BACKUP_DIR/memory_console-<time>.dump. Prove it with "
        "`restore_check FILE`."
    )

    def add_arguments(self, parser):
        parser.add_argument("--out", metavar="FILE")

    def handle(self, *args, **options):
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        out = Path(options["out"] or Path(settings.BACKUP_DIR) / f"memory_console-{stamp}.dump")
        self.stderr.write(f"pg_dump to {out} ...")
        try:
            backup.backup(out)
        except Invalid as error:
            raise CommandError(error.message) from None
        except subprocess.CalledProcessError as error:
            raise CommandError(f"pg_dump failed: {error.stderr.strip()}") from None
        self.stdout.write(f"backup: {out} ({out.stat().st_size} bytes)")
