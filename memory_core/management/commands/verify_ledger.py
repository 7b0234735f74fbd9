"""`verify_ledger [--checkpoint FILE --public-key FILE]`: check every stream's hash chain.

Exit 0 printing `ok: N events`; otherwise exit 1 naming the first broken event. With a
checkpoint, its signature is checked first, then every chain, then that each stream still
holds the checkpointed head (memory_core/ledger/checkpoints.py); a failure names the stream and
sequence.
"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from memory_core.errors import Invalid
from memory_core.ledger import checkpoints, ledger
from memory_core.management.progress import Progress

# Below this many events the check takes well under a second: no progress line.
PROGRESS_FROM = 5000


class Command(BaseCommand):
    help = (
        "Verify the ledger's hash chains, stream by stream. Exit status 0 and 'ok: N events' "
        "when they hold; 1 and the first broken event (id, stream, seq, kind, problem) if not. "
        "With --checkpoint FILE --public-key FILE, also check the checkpoint's signature and "
        "that every stream still holds the head it signed."
    )

    def add_arguments(self, parser):
        parser.add_argument("--checkpoint", metavar="FILE")
        parser.add_argument("--public-key", metavar="FILE")

    def handle(self, *args, **options):
        if bool(options["checkpoint"]) != bool(options["public_key"]):
            raise CommandError("--checkpoint and --public-key go together")
        total = ledger.total_events()
        quiet = options["verbosity"] < 1 or total < PROGRESS_FROM
        if options["checkpoint"]:
            self._against_checkpoint(options, total, quiet)
            return
        with Progress(total, "ledger", self.stderr, quiet=quiet) as progress:
            result = ledger.verify(progress=progress)
        if result.ok:
            self.stdout.write(f"ok: {result.count} events")
            return
        event = result.broken
        self.stderr.write(
            f"broken: event {event.pk} (stream {event.stream}, seq {event.seq}, "
            f"kind {event.kind}): {result.problem}; {result.count} event(s) before it verified"
        )
        # Not CommandError: its message would be prefixed "CommandError:" and, under
        # call_command, raised instead of exiting. Scripts test the exit status.
        raise SystemExit(1)

    def _against_checkpoint(self, options, total, quiet):
        try:
            public_key = checkpoints.load_public_key(options["public_key"])
            try:
                data = Path(options["checkpoint"]).read_bytes()
            except OSError as error:
                raise Invalid(f"cannot read the checkpoint: {error.strerror}") from None
            checkpoint = checkpoints.parse(data)
        except Invalid as error:
            self.stderr.write(f"broken: {error.message}")
            raise SystemExit(1) from None
        with Progress(total, "ledger", self.stderr, quiet=quiet) as progress:
            result = checkpoints.verify(checkpoint, public_key, progress=progress)
        if not result.ok:
            self.stderr.write(result.message)
            raise SystemExit(1)
        self.stdout.write(f"ok: {result.count} events")
        self.stdout.write(
            f"checkpoint of {result.taken_at} (key {result.key_id[:16]}…): "
            f"{len(result.heads)} head(s) hold"
        )
        for head in result.heads:
            self.stdout.write(f"  {head['stream']} seq {head['seq']} {head['hash']}")
