"""The pooler's figures for `manage.py bench`: saturated turns per second

- `unprepared`: straight to PostgreSQL with the settings a transaction pooler needs
  (DATABASE_POOLER=pgbouncer: no server-side prepared statements), so that set against the
  bench's `throughput` (prepared) it is the cost of turning them off;
- `pgbouncer`: the same through Debian's PgBouncer in transaction mode.

Skipped (None) when pgbouncer is not installed.
"""

from pathlib import Path

from memory_console.bench import cpu
from memory_console.loadgen.pooler import PgBouncer, binary, user_of
from memory_console.loadgen.server import AppServer


def pooled_throughput(
    url, owner_url, secret, actors, args, rng, log_dir: Path, measure, postgres=None
):
    """{"unprepared": {...}, "pgbouncer": {...}}, each what `measure(port, ...)` (the bench's
    saturated_turns) reports for a server so configured; None without pgbouncer.
    `postgres`: the local server's postmaster, for the CPU split (bench/cpu.py)."""
    if binary() is None:
        return None
    settings = {"DATABASE_POOLER": "pgbouncer"}

    def turns_served_by(app, pooler=None):
        return measure(
            app.port,
            secret,
            actors,
            args,
            rng,
            processes=lambda: cpu.groups(app.proc.pid, postgres, pooler),
        )

    figures = {}
    log = log_dir / "server-unprepared.log"
    with AppServer(
        url, owner_url, log_path=log, workers=args.workers, access_log=False, env=settings
    ) as app:
        figures["unprepared"] = turns_served_by(app)
    with PgBouncer(url, [user_of(url)]) as bouncer:
        log = log_dir / "server-pgbouncer.log"
        with AppServer(
            bouncer.url(user_of(url)),
            owner_url,
            log_path=log,
            workers=args.workers,
            access_log=False,
            env=settings,
        ) as app:
            figures["pgbouncer"] = turns_served_by(app, bouncer.proc.pid)
    return figures
