"""Read replicas for the console (DATABASE_REPLICA_URLS), with read-your-writes.

What goes where:
- the console's reads (GET/HEAD of its pages, the audit pages, its searches and exports)
  go to a streaming replica, when one is fit (below);
- everything else goes to the primary (`default`): every write, every read inside a write's
  transaction, everything an agent does (the API and MCP, whose per-turn path runs on
  prepared statements on `default` anyway), the session and the logged-in user (read before
  anything else, and just written by a login), login throttling, the cache.

Read-your-writes: after a console request that may have written (any method but GET/HEAD),
ReplicaRoutingMiddleware stores the primary's WAL position (pg_current_wal_lsn(), taken
after the write committed) in the person's session. Their next reads go to a replica only
once it has replayed past that position (pg_last_wal_replay_lsn()); until then, to the
primary. The writer never reads a state older than their own write; other people may read
a state up to REPLICA_MAX_LAG_SECONDS old.

A replica is skipped, with a log line, when it is down (then not tried again for
REPLICA_RETRY_SECONDS) or further behind than REPLICA_MAX_LAG_SECONDS; the request is then
served by the primary. Should a replica fail in the middle of a page (it died after the
check), the page is answered again from the primary: a console read never errors because of
a replica.
"""

import contextvars
import logging
import threading
import time
from dataclasses import dataclass

from django.conf import settings
from django.db import DatabaseError, connections

logger = logging.getLogger(__name__)

# The session key holding the WAL position of the person's last write.
LSN_KEY = "_write_lsn"
# How long a replica's replay position and lag, once read, are trusted by this process.
STATUS_SECONDS = 1.0
SAFE_METHODS = ("GET", "HEAD")
# Paths that are not the console: the agent API, MCP, metrics, probes, static files.
NOT_CONSOLE = ("/api/", "/mcp", "/metrics", "/health/", "/static/")
# Tables the console reads on a replica: the core's, but login throttling (written by the
# attempt being checked). Django's own tables (sessions, users, the cache) stay on the primary.
PRIMARY_ONLY_MODELS = {"loginattempt"}

# The replica the current request may read from (None: the primary).
_replica: contextvars.ContextVar[str | None] = contextvars.ContextVar("replica", default=None)


def parse_lsn(text: str | None) -> int | None:
    """'16/B374D848' as the integer PostgreSQL compares (None for None or garbage)."""
    if not text or "/" not in text:
        return None
    high, _, low = text.partition("/")
    try:
        return (int(high, 16) << 32) | int(low, 16)
    except ValueError:
        return None


@dataclass
class Status:
    up: bool
    replay_lsn: int | None = None
    lag: float | None = None  # seconds of received WAL not yet replayed
    checked: float = 0.0


_STATUS_SQL = """
    SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn()::text,
           CASE WHEN pg_last_wal_receive_lsn() IS NULL
                  OR pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
                ELSE coalesce(extract(epoch FROM now() - pg_last_xact_replay_timestamp()), 0)
           END
"""


class _Replicas:
    """This process's view of its replicas: status per alias, refreshed at most every
    STATUS_SECONDS (or on demand), and when each was last logged as skipped."""

    def __init__(self):
        self.status: dict[str, Status] = {}
        self.logged: dict[tuple[str, str], float] = {}
        self.lock = threading.Lock()
        self.next = 0

    def check(self, alias: str) -> Status:
        """Ask the replica now (one query on its own pooled connection)."""
        try:
            with connections[alias].cursor() as cursor:
                cursor.execute(_STATUS_SQL)
                in_recovery, replay, lag = cursor.fetchone()
            status = Status(True, parse_lsn(replay), float(lag or 0), time.monotonic())
            if not in_recovery:  # promoted, or pointed at a primary: it has every write
                status.lag = 0.0
        except DatabaseError as error:
            connections[alias].close()
            status = Status(False, checked=time.monotonic())
            self.log(alias, "down", f"replica {alias} is unreachable, using the primary: {error}")
        self.status[alias] = status
        return status

    def current(self, alias: str) -> Status:
        status = self.status.get(alias)
        now = time.monotonic()
        if status is None:
            return self.check(alias)
        if status.up and now - status.checked < STATUS_SECONDS:
            return status
        if not status.up and now - status.checked < settings.REPLICA_RETRY_SECONDS:
            return status
        return self.check(alias)

    def log(self, alias: str, why: str, message: str) -> None:
        """A warning, at most once per REPLICA_RETRY_SECONDS per replica and reason."""
        now = time.monotonic()
        if now - self.logged.get((alias, why), -1e9) >= settings.REPLICA_RETRY_SECONDS:
            self.logged[(alias, why)] = now
            logger.warning(message)

    def choose(self, written: int | None) -> str | None:
        """A replica fit for a read after a write at WAL position `written` (None: no
        write to wait for), or None for the primary."""
        aliases = settings.DATABASE_REPLICAS
        if not aliases:
            return None
        with self.lock:
            start = self.next
            self.next = (self.next + 1) % len(aliases)
        for alias in aliases[start:] + aliases[:start]:
            status = self.current(alias)
            if not status.up:
                continue
            if status.lag is not None and status.lag > settings.REPLICA_MAX_LAG_SECONDS:
                self.log(
                    alias,
                    "lag",
                    f"replica {alias} is {status.lag:.1f}s behind (more than "
                    f"REPLICA_MAX_LAG_SECONDS={settings.REPLICA_MAX_LAG_SECONDS:g}), "
                    "using the primary",
                )
                continue
            if written is not None and (status.replay_lsn or 0) < written:
                status = self.check(alias)  # it may have caught up since the last look
                if not status.up or (status.replay_lsn or 0) < written:
                    continue  # not yet past this person's write: the primary serves them
            return alias
        return None

    def forget(self) -> None:
        self.status.clear()
        self.logged.clear()


replicas = _Replicas()


def replica_lag(alias: str) -> float | None:
    """Seconds the replica is behind, asked now; None if it is unreachable (for /metrics)."""
    status = replicas.check(alias)
    return status.lag if status.up else None


def is_console_read(request) -> bool:
    return request.method in SAFE_METHODS and not request.path.startswith(NOT_CONSOLE)


def primary_lsn() -> int | None:
    """The primary's WAL write position now: past every transaction committed so far."""
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_lsn()::text")
        return parse_lsn(cursor.fetchone()[0])


class ReplicaRoutingMiddleware:
    """After AuthenticationMiddleware: picks the replica a console read may use, and records
    the WAL position of a console write in the session."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not settings.DATABASE_REPLICAS or request.path.startswith(NOT_CONSOLE):
            return self.get_response(request)
        if not is_console_read(request):
            response = self.get_response(request)
            self._remember_write(request)
            return response
        alias = replicas.choose(parse_lsn(request.session.get(LSN_KEY)))
        if alias is None:
            return self.get_response(request)
        token = _replica.set(alias)
        try:
            response = self.get_response(request)
        finally:
            _replica.reset(token)
        request.replica = alias
        if response.status_code == 503 and not replicas.check(alias).up:
            # The replica died mid-page (DatabaseUnavailableMiddleware answered 503 for it):
            # a read is safe to answer again, from the primary.
            request.replica = None
            response = self.get_response(request)
        return response

    def _remember_write(self, request) -> None:
        session = getattr(request, "session", None)
        user = getattr(request, "user", None)
        if session is None or user is None or not user.is_authenticated:
            return  # nobody to read their write (and no session made for a failed login)
        try:
            lsn = primary_lsn()
        except DatabaseError:
            return  # the primary is down: the request has answered 503 already
        if lsn is not None:
            high, low = divmod(lsn, 1 << 32)
            session[LSN_KEY] = f"{high:X}/{low:X}"


def on_this_replica(chunks):
    """A streamed body (an export) read where its view read: Django iterates it after the
    middleware has returned, outside the request's choice of replica, so the choice (taken
    now, in the view) is carried into each step of the iteration. A write inside (the
    export's access-log row) still goes to the primary."""
    alias = _replica.get()
    if alias is None:
        return chunks
    return _stepped_on(alias, iter(chunks))


def _stepped_on(alias: str, chunks):
    while True:
        token = _replica.set(alias)
        try:
            chunk = next(chunks)
        except StopIteration:
            return
        finally:
            _replica.reset(token)
        yield chunk


class ReplicaRouter:
    """settings.DATABASE_ROUTERS: reads of the core's tables during a console read to the
    chosen replica; every write, and every read inside a transaction, to the primary."""

    def db_for_read(self, model, **hints):
        alias = _replica.get()
        if alias is None:
            return None
        if model._meta.app_label != "memory_core" or model._meta.model_name in (
            PRIMARY_ONLY_MODELS
        ):
            return "default"
        if connections["default"].in_atomic_block:
            return "default"  # a read that belongs to a write sees the write's own state
        return alias

    def db_for_write(self, model, **hints):
        # Explicitly the primary: an instance read from a replica would otherwise be saved
        # back to where it came from.
        return "default" if settings.DATABASE_REPLICAS else None

    def allow_relation(self, obj1, obj2, **hints):
        if settings.DATABASE_REPLICAS:
            return True
        return None

    def allow_migrate(self, db, app_label, model_name=None, **hints):
        if db in settings.DATABASE_REPLICAS:
            return False  # a replica replays the primary's schema; nobody migrates it
        return None
