"""PgBouncer in front of a database, in transaction mode, for the pooler's test and bench.

Debian's `pgbouncer` (1.18; `.ci/run` installs it) in the foreground, in a fresh directory,
on a free loopback port, forwarding every database name to the server the given URL names.
Clients log in as the URL's roles with `auth_type = trust` against its own user list: fit
for the embedded server, which trusts its socket; a production PgBouncer authenticates
(auth_query or a userlist with SCRAM secrets). PgBouncer refuses to run as root, so under
root it runs as the embedded server's OS user, as PostgreSQL itself does.

What the app must change behind it: DATABASE_POOLER=pgbouncer (settings.py) turns off the
server-side prepared statements (PgBouncer < 1.21 cannot follow them from one server
connection to the next) and the `options` startup parameter (PgBouncer refuses it).
"""

import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import quote, urlsplit

from memory_console.database import parse_database_url
from memory_console.loadgen.server import free_port

PREFIX = "mc-pgbouncer-"
SERVER_USER = "embedded_postgres"


def binary() -> str | None:
    return shutil.which("pgbouncer") or (
        "/usr/sbin/pgbouncer" if os.path.exists("/usr/sbin/pgbouncer") else None
    )


class PgBouncer:
    """`PgBouncer(database_url, users=[...]).start()`; `url(user, dbname)` is how a client
    reaches the same database through it; `stop()` ends it and removes its directory."""

    def __init__(self, database_url: str, users: list[str], *, pool_size: int = 20):
        target = parse_database_url(database_url)
        self.target_host = target["HOST"] or "localhost"
        self.target_port = target["PORT"] or "5432"
        self.dbname = target["NAME"]
        self.users = users
        self.pool_size = pool_size
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(dir="/tmp", prefix=PREFIX))
        self.proc: subprocess.Popen | None = None

    def _config(self) -> str:
        return "\n".join(
            [
                "[databases]",
                f"* = host={self.target_host} port={self.target_port}",
                "[pgbouncer]",
                "listen_addr = 127.0.0.1",
                f"listen_port = {self.port}",
                "unix_socket_dir =",
                "auth_type = trust",
                f"auth_file = {self.root / 'userlist.txt'}",
                "pool_mode = transaction",
                f"default_pool_size = {self.pool_size}",
                "max_client_conn = 500",
                # A server connection goes back to the pool after each transaction; reset
                # nothing per client (transaction mode has no per-client session state).
                "server_reset_query =",
                f"logfile = {self.root / 'pgbouncer.log'}",
                f"pidfile = {self.root / 'pgbouncer.pid'}",
                "",
            ]
        )

    def start(self, timeout: float = 30) -> "PgBouncer":
        exe = binary()
        if exe is None:
            raise RuntimeError("pgbouncer is not installed (apt-get install pgbouncer)")
        (self.root / "userlist.txt").write_text("".join(f'"{user}" ""\n' for user in self.users))
        (self.root / "pgbouncer.ini").write_text(self._config())
        prefix = []
        if os.geteuid() == 0:
            entry = pwd.getpwnam(SERVER_USER)
            for path in (self.root, *self.root.iterdir()):
                os.chown(path, entry.pw_uid, entry.pw_gid)
            prefix = ["runuser", "-u", SERVER_USER, "--"]
        self.proc = subprocess.Popen(
            [*prefix, exe, str(self.root / "pgbouncer.ini")],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while True:
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=1),
            ):
                return self
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"pgbouncer did not start:\n{self.log()}")
            time.sleep(0.1)

    def url(self, user: str, dbname: str | None = None) -> str:
        return f"postgresql://{quote(user)}@127.0.0.1:{self.port}/{quote(dbname or self.dbname)}"

    def log(self) -> str:
        try:
            return (self.root / "pgbouncer.log").read_text(errors="replace")
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> "PgBouncer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def user_of(url: str) -> str:
    return urlsplit(url).username or ""
