"""`reembed`: rebuild the vector of every live memory version with the configured embedder.

After a change of embedder (model, version or dimensions) the stored vectors are another
model's: search never compares them with the new model's query vectors, so until this has
run those memories are found by the lexical tiers only. Batched, each batch committed on
its own, with a progress bar; interrupted, it resumes where it stopped (it only picks
versions whose vector the configured embedder did not make). Exit 1 when the embedder fails.
"""

import time

from django.core.management.base import BaseCommand

from memory_core.management.progress import Progress
from memory_core.recall import embeddings, providers


class Command(BaseCommand):
    help = "Rebuild every live memory version's vector with the configured embedder (resumable)."

    def add_arguments(self, parser):
        parser.add_argument("--batch", type=int, default=512, help="texts per embedder call")

    def handle(self, *args, batch, **options):
        if batch < 1:
            self.stderr.write("--batch must be 1 or more")
            raise SystemExit(2)
        embedder = providers.current()
        if embedder is None:
            self.stdout.write("no embedder configured (MEMORY_EMBEDDER=none): nothing to do")
            return
        embeddings.add_missing()
        total = embeddings.stale_count()
        quiet = options["verbosity"] < 1 or total == 0
        started = time.monotonic()
        try:
            with Progress(total, "reembed", self.stderr, quiet=quiet) as progress:
                done = embeddings.reembed(batch=batch, progress=progress)
        except providers.EmbedderError as error:
            self.stderr.write(f"{error}; {embeddings.stale_count()} left to rebuild")
            raise SystemExit(1) from None
        seconds = time.monotonic() - started
        rate = f" ({done / seconds:,.0f} rows/s)" if done and seconds > 0 else ""
        self.stdout.write(f"reembedded {done} with {embedder.identity}{rate}")
