"""`verify_ledger`: check every stream's hash chain.

Exit 0 printing `ok: N events`; otherwise exit 1 naming the first broken event.
"""

from django.core.management.base import BaseCommand

from memory_core import ledger
from memory_core.progress import Progress

# Below this many events the check takes well under a second: no progress line.
PROGRESS_FROM = 5000


class Command(BaseCommand):
    help = (
        "Verify the ledger's hash chains, stream by stream. Exit status 0 and 'ok: N events' "
        "when they hold; 1 and the first broken event (id, stream, seq, kind, problem) if not."
    )

    def handle(self, *args, **options):
        total = ledger.total_events()
        quiet = options["verbosity"] < 1 or total < PROGRESS_FROM
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
