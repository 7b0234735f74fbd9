"""`bench_ab [--size S] [--a-database A] [--b-database B] [--b-env KEY=VALUE] [--b-project DIR]
[--ops turn,turn_query] [--requests N] [--runs N] [--out FILE.json]`: two servers compared over
HTTP in the bench's alternating rounds (memory_console/bench/ab.py).

A is the size's bench database (made by `bench --size S`) unless --a-database names another;
B is A's database unless --b-database names another, which must hold the same actors (a
copy: `CREATE DATABASE b TEMPLATE a`). Each side may have its own environment (--a-env,
--b-env: settings such as MEMORY_EMBEDDER) and its own checkout (--a-project, --b-project:
a `git worktree` of another commit). A delivery-side command, like `bench`.
"""

import json
import random
from pathlib import Path

import psycopg
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from memory_console.bench import ab
from memory_console.bench import database as bench_db
from memory_console.bench.run import REST_OPS
from memory_console.bench.sizes import PUBLIC_SIZES
from memory_core.db.privileges import OWNER_ALIAS


def parse_ops(text: str) -> list[str]:
    ops = [op.strip() for op in text.split(",") if op.strip()]
    unknown = [op for op in ops if op not in REST_OPS]
    if not ops or unknown:
        raise CommandError(
            f"--ops takes a comma-separated list of {', '.join(REST_OPS)}; got {text!r}"
        )
    return list(dict.fromkeys(ops))


def parse_env(pairs: list[str], flag: str) -> dict:
    env = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise CommandError(f"{flag} takes KEY=VALUE; got {pair!r}")
        env[key.strip()] = value
    return env


def checked_project(path: Path | str | None, flag: str) -> Path:
    if path is None:
        return ab.PROJECT
    path = Path(path)
    if not (path / "manage.py").is_file():
        raise CommandError(f"{flag} {path}: no manage.py there")
    return path.resolve()


def holds_actors(dbname: str) -> bool | None:
    """None when there is no such database; else whether it has Memory Console's actors."""
    with psycopg.connect(bench_db.server_url("postgres", OWNER_ALIAS), autocommit=True) as conn:
        found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (dbname,))
        if found.fetchone() is None:
            return None
    with psycopg.connect(bench_db.server_url(dbname, OWNER_ALIAS)) as conn:
        return conn.execute("SELECT to_regclass('memory_core_actor') IS NOT NULL").fetchone()[0]


class Command(BaseCommand):
    help = (
        "Compare two servers (two databases, environments or checkouts) over HTTP, in "
        "alternating rounds of the bench's requests; prints each op's p50 on both sides."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--size",
            default="10k",
            choices=PUBLIC_SIZES,
            help="side A is this size's bench database (10k)",
        )
        parser.add_argument("--a-database", default=None, help="side A's database instead")
        parser.add_argument("--b-database", default=None, help="side B's database (A's)")
        for side in ("a", "b"):
            parser.add_argument(
                f"--{side}-env",
                action="append",
                default=[],
                metavar="KEY=VALUE",
                help=f"an environment variable for side {side.upper()}'s server (repeatable)",
            )
            parser.add_argument(
                f"--{side}-project",
                type=Path,
                default=None,
                help=f"the checkout side {side.upper()}'s server runs (this one)",
            )
        parser.add_argument(
            "--ops",
            default="turn,turn_query",
            help=f"comma-separated, of {', '.join(REST_OPS)} (turn,turn_query)",
        )
        parser.add_argument(
            "--requests", type=int, default=3000, help="measured per op and side (3000)"
        )
        parser.add_argument("--warmup", type=int, default=100, help="unmeasured, first (100)")
        parser.add_argument("--clients", type=int, default=2, help="per side (2)")
        parser.add_argument("--workers", type=int, default=2, help="per server (2)")
        parser.add_argument("--runs", type=int, default=1, help="comparisons in a row (1)")
        parser.add_argument("--seed", type=int, default=None, help="the random order's seed")
        parser.add_argument("--out", type=Path, default=None, help="the figures as JSON")

    def handle(self, *args, **options):
        ops = parse_ops(options["ops"])
        for name in ("requests", "runs", "clients", "workers"):
            if options[name] < 1:
                raise CommandError(f"--{name} must be at least 1")
        if options["warmup"] < 0:
            raise CommandError("--warmup must not be negative")
        a_db = options["a_database"] or bench_db.default_name(options["size"])
        b_db = options["b_database"] or a_db
        for flag, dbname in (("A", a_db), ("B", b_db)):
            held = holds_actors(dbname)
            if held is None:
                hint = "" if options["a_database"] else f" (bench --size {options['size']})"
                raise CommandError(f"side {flag}: there is no database {dbname}{hint}")
            if not held:
                raise CommandError(f"side {flag}: {dbname} is not a Memory Console database")
        sides = [
            ab.Side(
                name,
                bench_db.server_url(dbname),
                bench_db.server_url(dbname, OWNER_ALIAS),
                env=parse_env(options[f"{flag}_env"], f"--{flag}-env"),
                project=checked_project(options[f"{flag}_project"], f"--{flag}-project"),
            )
            for name, flag, dbname in (("A", "a", a_db), ("B", "b", b_db))
        ]
        rng = random.Random(options["seed"])
        refs = ab.sample_refs(sides[0].url, rng)
        if not refs:
            raise CommandError(f"side A: {a_db} has no actors to ask for")
        missing = ab.missing_refs(sides[1].url, refs) if b_db != a_db else []
        if missing:
            raise CommandError(
                f"side B: {b_db} lacks {len(missing)} of A's actors (e.g. {missing[0]}); "
                "make it a copy of A (CREATE DATABASE ... TEMPLATE ...)"
            )
        log_dir = Path(settings.BASE_DIR) / "var" / "bench" / "ab"
        runs = []
        for run in range(1, options["runs"] + 1):
            self.stderr.write(f"Run {run} of {options['runs']}: A {a_db}, B {b_db} ...")
            result = ab.compare(
                sides,
                ops,
                refs,
                requests=options["requests"],
                warmup=options["warmup"],
                clients=options["clients"],
                workers=options["workers"],
                rng=rng,
                log_dir=log_dir,
            )
            runs.append(result)
            self.stdout.write(f"run {run}\n{ab.table(result, ops)}")
        if options["out"] is not None:
            described = {
                side.name: {"database": dbname, "env": side.env, "project": str(side.project)}
                for side, dbname in zip(sides, (a_db, b_db), strict=True)
            }
            Path(options["out"]).write_text(
                json.dumps({"sides": described, "ops": ops, "runs": runs}, indent=2)
            )
            self.stdout.write(f"Figures written to {options['out']}")
