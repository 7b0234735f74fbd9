"""`garden [--scope S] [--dry-run]`: one gardening pass (memory_core/garden/).

Prints, per kind, how many proposals the pass found, opened, kept (the same evidence as an
open proposal), closed as obsolete, and left suppressed (dismissed, and the evidence did not
grow); then the health report's totals. `--dry-run` writes nothing. Progress goes to
stderr, one step per detector.
"""

from django.core.management.base import BaseCommand, CommandError

from memory_core.garden import passes
from memory_core.management.progress import Progress
from memory_core.models import Scope


class Command(BaseCommand):
    help = (
        "Run a gardening pass: propose promotions, merges, invalidations of stale memories "
        "and reviews of shadowed people's values, and measure per-scope health. Nothing is "
        "changed until a person approves a proposal in the console (/garden/)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--scope", metavar="S", help="only what a grant on S reaches")
        parser.add_argument("--dry-run", action="store_true", help="report, write nothing")

    def handle(self, *args, scope=None, dry_run=False, **options):
        target = None
        if scope:
            target = Scope.objects.filter(token=scope).first()
            if target is None:
                raise CommandError(f"unknown scope {scope!r}")
        quiet = options["verbosity"] < 1
        with Progress(len(passes.STEPS), "garden steps", self.stderr, quiet=quiet) as progress:
            report = passes.run_pass(scope=target, dry_run=dry_run, progress=progress)
        where = f" under {target.token}" if target else ""
        mode = " (dry run: nothing written)" if dry_run else ""
        self.stdout.write(
            f"Garden pass{where}{mode}: {report.memories} live memories in {report.seconds:.1f} s."
        )
        self.stdout.write(
            f"{'kind':<10} {'found':>7} {'opened':>7} {'kept':>7} {'obsolete':>9} "
            f"{'suppressed':>11}"
        )
        for kind in passes.KINDS:
            self.stdout.write(
                f"{kind:<10} {report.found[kind]:>7} {report.created[kind]:>7} "
                f"{report.kept[kind]:>7} {report.obsoleted[kind]:>9} "
                f"{report.suppressed[kind]:>11}"
            )
        self.stdout.write(
            f"Health: {report.never_shown} live memories never shown by any turn; "
            f"{report.omitting_turns} recent turns left keys out."
        )
        self.stdout.write(f"Open proposals{where}: {report.open_proposals}.")
