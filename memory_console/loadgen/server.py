"""The app server under test: `manage.py serve` (gunicorn, DEBUG off) in a subprocess on a
free loopback port, against the database URLs it is given, as in production: it migrates
as the owner (DATABASE_OWNER_URL) and serves as the server's role (DATABASE_URL), see
memory_core/db/privileges.py.

It runs in its own session (process group), so stopping it stops gunicorn and every worker
at once, even when the arbiter died first; and on Linux it is sent SIGTERM when the thread
that started it ends (the main thread, for the bench and the tests), even by SIGKILL, so an
interrupted bench or test run leaves no gunicorn behind.
"""

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from memory_console.loadgen.client import HOST, get

# Where manage.py is (settings.BASE_DIR, without needing settings configured).
PROJECT = Path(__file__).resolve().parents[2]
START_SECONDS = 240


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


class TimedOut(AssertionError):
    """A wait ran out of time (an AssertionError: to a test, a failed check)."""


def wait_until(predicate, *, timeout: float, interval: float = 0.2, what: str = "condition"):
    """Poll `predicate` until it returns something truthy, and return that; TimedOut after
    `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimedOut(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


try:
    _LIBC = ctypes.CDLL("libc.so.6", use_errno=True)
except OSError:  # not glibc Linux: no parent-death signal, stop() still stops the server
    _LIBC = None
PR_SET_PDEATHSIG = 1


def _terminate_with_parent() -> None:
    """In the child before exec: SIGTERM when the thread that started it dies. Nothing but
    one libc call here (no import, no allocation worth naming): the parent may have
    threads."""
    if _LIBC is not None:
        _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class AppServer:
    """`python manage.py serve --workers N` on `port` (a free one by default).

    `env` adds to (or overrides) the environment the server and `manage()` run with;
    `project` is the checkout whose manage.py serves (this one by default).
    `access_log=False` sends gunicorn's access log (stdout) nowhere: the production config
    writes it, so the workers pay for it as in production, but nobody needs to read it; the
    error log (stderr) always goes to `log_path`.
    """

    def __init__(
        self,
        database_url: str,
        owner_url: str,
        *,
        log_path: Path,
        workers: int = 2,
        port: int | None = None,
        env: dict | None = None,
        access_log: bool = True,
        project: Path = PROJECT,
    ):
        self.workers = workers
        self.project = project
        self.port = port or free_port()
        self.log_path = log_path
        self.access_log = access_log
        self.proc: subprocess.Popen | None = None
        self.env = {
            **os.environ,
            "DATABASE_URL": database_url,
            "DATABASE_OWNER_URL": owner_url,
            "DEBUG": "0",
            "DJANGO_SETTINGS_MODULE": "memory_console.settings",
            **(env or {}),
        }

    def start(self, timeout: float = START_SECONDS) -> None:
        """Start it and return once it answers /api/v1/health with 200."""
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "wb") as log:  # the child keeps its own descriptor
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "manage.py",
                    "serve",
                    "--host",
                    HOST,
                    "--port",
                    str(self.port),
                    "--workers",
                    str(self.workers),
                ],
                cwd=self.project,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log if self.access_log else subprocess.DEVNULL,
                stderr=log,
                start_new_session=True,
                preexec_fn=_terminate_with_parent,
            )

        def healthy():
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"serve exited with {self.proc.returncode}; the end of {self.log_path}:\n"
                    f"{self.log_tail()}"
                )
            return get(self.port, "/api/v1/health", timeout=5).status == 200

        try:
            wait_until(
                healthy, timeout=timeout, interval=0.25, what="the app server to answer /health"
            )
        except BaseException:
            self.stop()
            raise

    def log_tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except FileNotFoundError:
            return ""

    def manage(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        """A management command against the same database, with the same environment."""
        return subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=self.project,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def stop(self) -> None:
        """SIGTERM to the whole process group, SIGKILL after 30 s; then SIGKILL to whatever
        is left in the group (workers whose arbiter died first)."""
        if self.proc is None or self.proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)

    def __enter__(self) -> "AppServer":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
