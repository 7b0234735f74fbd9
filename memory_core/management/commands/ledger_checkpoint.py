"""`ledger_checkpoint --key FILE [--out FILE]`: sign every ledger stream's head now."""

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from memory_core.accounts.principals import Principal
from memory_core.errors import Invalid
from memory_core.ledger import checkpoints


class Command(BaseCommand):
    help = (
        "Write a signed checkpoint of the ledger: for every stream its head (seq, hash, time) "
        "and event count, signed with the Ed25519 key in FILE or in the LEDGER_SIGNING_KEY "
        "environment variable. Without --out it goes to LEDGER_CHECKPOINT_DIR. Store it "
        "somewhere the database's superuser cannot reach."
    )

    def add_arguments(self, parser):
        parser.add_argument("--key", metavar="FILE", help="default: $LEDGER_SIGNING_KEY")
        parser.add_argument("--out", metavar="FILE")

    def handle(self, *args, **options):
        try:
            key = checkpoints.load_signing_key(options["key"])
        except Invalid as error:
            raise CommandError(error.message) from None
        checkpoint = checkpoints.take(key, Principal.system("cli:ledger_checkpoint"))
        out = options["out"]
        path = (
            Path(out)
            if out
            else checkpoints.default_path(settings.LEDGER_CHECKPOINT_DIR, checkpoint)
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(checkpoints.dumps(checkpoint))
        self.stdout.write(
            f"checkpoint: {path}: {checkpoint['events']} events in "
            f"{len(checkpoint['streams'])} stream(s), key {checkpoint['key_id'][:16]}…"
        )
