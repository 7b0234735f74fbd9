"""`embed_pending`: embed every memory version left without a vector.

A version is left pending when the embedder failed as it was written (the write itself
succeeded). Later writes fill a few in once the embedder answers again; this fills in all
of them, with a progress bar. Exit 1 when the embedder fails (what was done stays done).
"""

from django.core.management.base import BaseCommand

from memory_core.management.progress import Progress
from memory_core.recall import embeddings, providers


class Command(BaseCommand):
    help = "Embed every memory version left without a vector (its embedder failed at write)."

    def add_arguments(self, parser):
        parser.add_argument("--batch", type=int, default=256, help="texts per embedder call")

    def handle(self, *args, batch, **options):
        if batch < 1:
            self.stderr.write("--batch must be 1 or more")
            raise SystemExit(2)
        if providers.current() is None:
            self.stdout.write("no embedder configured (MEMORY_EMBEDDER=none): nothing to do")
            return
        embeddings.add_missing()
        total = embeddings.pending_count()
        quiet = options["verbosity"] < 1 or total == 0
        with Progress(total, "embed", self.stderr, quiet=quiet) as progress:
            done = embeddings.fill_pending(batch=batch, progress=progress)
        left = embeddings.pending_count()
        self.stdout.write(f"embedded {done}; {left} pending")
        if left and done < total:
            self.stderr.write("the embedder failed; run embed_pending again when it answers")
            raise SystemExit(1)
