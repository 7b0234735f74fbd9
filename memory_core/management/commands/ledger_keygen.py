"""`ledger_keygen --out DIR`: a new Ed25519 key pair for signing ledger checkpoints."""

from django.core.management.base import BaseCommand, CommandError

from memory_core.errors import Invalid
from memory_core.ledger import checkpoints


class Command(BaseCommand):
    help = (
        "Write an Ed25519 key pair for ledger checkpoints: DIR/ledger-signing.key (mode 0600) "
        "and DIR/ledger-signing.pub. Keep the private key off the database server's disks "
        "where you can; give the public key to whoever verifies."
    )

    def add_arguments(self, parser):
        parser.add_argument("--out", required=True, metavar="DIR")

    def handle(self, *args, **options):
        try:
            private, public = checkpoints.write_keypair(options["out"])
        except Invalid as error:
            raise CommandError(error.message) from None
        key_id = checkpoints.key_id(checkpoints.load_public_key(public))
        self.stdout.write(f"private key: {private} (mode 0600)")
        self.stdout.write(f"public key: {public}")
        self.stdout.write(f"key id: {key_id}")
