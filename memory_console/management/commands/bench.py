"""`bench [--size 10k|100k|1m] [--out FILE.json] [--no-recall]`: the benchmark.

This process only makes sure the bench database exists (its own database on the same
PostgreSQL server, one per size; an incompletely seeded one is dropped and made again) and
then starts the measuring process with DATABASE_URL and DATABASE_OWNER_URL pointing at it
(memory_console/bench/run.py), which seeds, serves, measures and writes the report. Unless
--no-recall, it also makes the recall evaluation's scratch database (bench/recall.py).

A delivery-side command (it serves the app and drives it over HTTP), so it lives in
memory_console: memory_core never imports memory_console.
"""

import os
import subprocess
import sys
from pathlib import Path

import psycopg
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from memory_console.bench import database as bench_db
from memory_console.bench import recall
from memory_console.bench.sizes import PUBLIC_SIZES, SIZES
from memory_core.db.privileges import OWNER_ALIAS


class Command(BaseCommand):
    help = (
        "Benchmark the per-turn path and the API/console at a synthetic size, beside a "
        "hand-written floor and LangGraph's PostgresStore; writes a JSON report."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--size",
            default="10k",
            choices=sorted(SIZES),
            metavar="{" + ",".join(PUBLIC_SIZES) + "}",
            help="memories in the synthetic organisation (10k)",
        )
        parser.add_argument("--out", type=Path, default=None, help="bench-results/SIZE.json")
        parser.add_argument("--database", default=None, help="bench database name")
        parser.add_argument("--requests", type=int, default=None, help="measured per op")
        parser.add_argument("--warmup", type=int, default=None, help="unmeasured per op")
        parser.add_argument("--clients", type=int, default=2, help="concurrent HTTP clients")
        parser.add_argument("--no-peer", action="store_true", help="skip the LangGraph peer")
        parser.add_argument(
            "--no-recall",
            action="store_true",
            help="skip the recall evaluation on the held-out set (about half a minute)",
        )
        parser.add_argument(
            "--recall-database",
            default=None,
            help="the recall evaluation's scratch database (memory_bench_recall)",
        )

    def handle(self, *args, size, out, database, **options):
        dbname = database or bench_db.default_name(size)
        out = out or Path("bench-results") / f"{size}.json"
        recall_db = None if options["no_recall"] else options["recall_database"] or recall.DATABASE
        if recall_db == dbname:
            raise CommandError("the recall evaluation needs a database of its own")
        state = bench_db.prepare(dbname, size)
        self.stderr.write(f"Bench database {dbname}: {state}.")
        command = [
            sys.executable,
            "-m",
            "memory_console.bench.run",
            "--size",
            size,
            "--out",
            str(out),
            "--clients",
            str(options["clients"]),
        ]
        for flag in ("requests", "warmup"):
            if options[flag] is not None:
                command += [f"--{flag}", str(options[flag])]
        if options["no_peer"]:
            command.append("--no-peer")
        if recall_db is None:
            command.append("--no-recall")
        else:
            # Made here, where the embedded server's superuser makes its pgvector; the
            # measuring process runs the evaluation there. A failure here shows as the
            # evaluation's in the report, and the bench goes on.
            try:
                recall.prepare(recall_db)
            except (psycopg.Error, OSError) as error:
                self.stderr.write(f"Recall database {recall_db} not prepared: {error}")
            command += ["--recall-database", recall_db]
        env = {
            **os.environ,
            "DATABASE_URL": bench_db.server_url(dbname),
            "DATABASE_OWNER_URL": bench_db.server_url(dbname, OWNER_ALIAS),
            "DJANGO_SETTINGS_MODULE": "memory_console.settings",
            "DEBUG": "0",
        }
        result = subprocess.run(command, cwd=settings.BASE_DIR, env=env)
        if result.returncode != 0:
            raise CommandError(f"the bench failed (exit {result.returncode})")
        self.stdout.write(f"Report written to {out}")
