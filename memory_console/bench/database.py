"""The bench database: its own database on the same PostgreSQL server, one per size.

Made, seeded and analysed as the owner role (the `owner` alias), and served as the server's
role, as in production (memory_core/db/privileges.py).

A seed is complete only when the `bench_seed` marker row is written, in the same
transaction as the rows it describes; a database without it (an interrupted seed) is
dropped and made again rather than trusted.
"""

from urllib.parse import quote, urlencode

import psycopg
from django.conf import settings
from psycopg import sql

from memory_console.database import create_extension, ensure_embedded
from memory_core.db.privileges import OWNER_ALIAS, acting_role

# Bumped whenever what the seed writes changes meaning (2: ledger events sealed with the
# hash of migration 0005; 3: every memory version embedded; 4: the kept live counts and
# conflicts of models/maintained.py, filled by its triggers as the seed's COPY inserts), so an
# older bench database is seeded afresh, not measured.
SEED_FORMAT = 4
MARKER_DDL = """
    CREATE TABLE IF NOT EXISTS bench_seed (
        size text PRIMARY KEY,
        memories bigint NOT NULL,
        ledger_events bigint NOT NULL,
        completed_at timestamptz NOT NULL DEFAULT now()
    )
"""
PEER_MARKER_DDL = """
    CREATE TABLE IF NOT EXISTS bench_peer_seed (
        size text PRIMARY KEY,
        items bigint NOT NULL,
        completed_at timestamptz NOT NULL DEFAULT now()
    )
"""


def default_name(size: str) -> str:
    return f"memory_bench_{size}"


def server_url(dbname: str, alias: str = "default") -> str:
    """A libpq URL for `dbname` on the server the `alias` database lives on, as its role:
    the server's by default, the owner's (OWNER_ALIAS) to make, seed and analyse."""
    db = settings.DATABASES[alias]
    # The bench connects with psycopg straight from the settings: start the embedded
    # server first, as Django's backend does on its first connection.
    ensure_embedded(db)
    user = quote(db.get("USER") or "", safe="")
    password = quote(db.get("PASSWORD") or "", safe="")
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    host, port = db.get("HOST") or "", db.get("PORT") or ""
    query = {}
    if host.startswith("/"):
        query["host"], netloc = host, ""
        if port:
            query["port"] = port
    else:
        netloc = host + (f":{port}" if port else "")
    role = acting_role(db["OPTIONS"].get("options", ""))
    if role:  # the tests' owner connection acting as the app role (tests/roles.py)
        query["options"] = f"-c role={role}"
    suffix = f"?{urlencode(query, safe='/', quote_via=quote)}" if query else ""
    return f"postgresql://{auth}{netloc}/{dbname}{suffix}"


def marker(size: str) -> str:
    return f"{size}/format-{SEED_FORMAT}"


def seed_state(dbname: str, size: str) -> str:
    """'missing', 'incomplete' or 'complete'."""
    with psycopg.connect(server_url("postgres", OWNER_ALIAS), autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [dbname]).fetchone()
    if not exists:
        return "missing"
    with psycopg.connect(server_url(dbname, OWNER_ALIAS), autocommit=True) as conn:
        table = conn.execute("SELECT to_regclass('bench_seed')").fetchone()[0]
        if table is None:
            return "incomplete"
        row = conn.execute("SELECT 1 FROM bench_seed WHERE size = %s", [marker(size)]).fetchone()
    return "complete" if row else "incomplete"


def prepare(dbname: str, size: str) -> str:
    """Make sure `dbname` exists, dropping an incomplete one; return its previous state."""
    state = seed_state(dbname, size)
    with psycopg.connect(server_url("postgres", OWNER_ALIAS), autocommit=True) as conn:
        if state == "incomplete":
            conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(dbname)))
        if state != "complete":
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname)))
    # The measuring process migrates through DATABASE_URL, where the embedded server's
    # superuser is out of reach: pgvector is made here (a no-op for another server, whose
    # migrate then says what to do).
    create_extension({**settings.DATABASES[OWNER_ALIAS], "NAME": dbname}, "vector")
    return state
