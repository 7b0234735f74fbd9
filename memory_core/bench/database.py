"""The bench database: its own database on the same PostgreSQL server, one per size.

A seed is complete only when the `bench_seed` marker row is written, in the same
transaction as the rows it describes; a database without it (an interrupted seed) is
dropped and made again rather than trusted.
"""

from urllib.parse import quote

import psycopg
from django.conf import settings
from psycopg import sql

# Bumped whenever what the seed writes changes meaning (2: ledger events sealed with the
# hash of migration 0005), so an older bench database is seeded afresh, not measured.
SEED_FORMAT = 2
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


def server_url(dbname: str) -> str:
    """A libpq URL for `dbname` on the server the default database lives on."""
    db = settings.DATABASES["default"]
    user = quote(db.get("USER") or "", safe="")
    password = quote(db.get("PASSWORD") or "", safe="")
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    host, port = db.get("HOST") or "", db.get("PORT") or ""
    if host.startswith("/"):
        suffix = f"?host={quote(host, safe='/')}" + (f"&port={port}" if port else "")
        return f"postgresql://{auth}/{dbname}{suffix}"
    netloc = host + (f":{port}" if port else "")
    return f"postgresql://{auth}{netloc}/{dbname}"


def marker(size: str) -> str:
    return f"{size}/format-{SEED_FORMAT}"


def seed_state(dbname: str, size: str) -> str:
    """'missing', 'incomplete' or 'complete'."""
    with psycopg.connect(server_url("postgres"), autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [dbname]).fetchone()
    if not exists:
        return "missing"
    with psycopg.connect(server_url(dbname), autocommit=True) as conn:
        table = conn.execute("SELECT to_regclass('bench_seed')").fetchone()[0]
        if table is None:
            return "incomplete"
        row = conn.execute("SELECT 1 FROM bench_seed WHERE size = %s", [marker(size)]).fetchone()
    return "complete" if row else "incomplete"


def prepare(dbname: str, size: str) -> str:
    """Make sure `dbname` exists, dropping an incomplete one; return its previous state."""
    state = seed_state(dbname, size)
    with psycopg.connect(server_url("postgres"), autocommit=True) as conn:
        if state == "incomplete":
            conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(dbname)))
        if state != "complete":
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname)))
    return state
