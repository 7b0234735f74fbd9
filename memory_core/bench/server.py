"""The real app under gunicorn (`manage.py serve`: 2 workers, DEBUG off) in a subprocess,
on a free loopback port, with DATABASE_URL and DATABASE_OWNER_URL pointing at the bench
database."""

import http.client
import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings

START_SECONDS = 120


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _healthy(port: int) -> bool:
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        conn.request("GET", "/api/v1/health")
        ok = conn.getresponse().status == 200
        conn.close()
        return ok
    except OSError:
        return False


@contextmanager
def serving(database_url: str, owner_url: str, workers: int, log_path: Path):
    """Yields the port of a running server; stops it (by its own pid) on the way out."""
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "DATABASE_OWNER_URL": owner_url,
        "DEBUG": "0",
    }
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "w") as log:
        # stdout carries gunicorn's access log: the production config writes it, so the
        # workers pay for it as in production, but nobody here needs to read it.
        process = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--port", str(port), "--workers", str(workers)],
            cwd=settings.BASE_DIR,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        try:
            deadline = time.monotonic() + START_SECONDS
            while not _healthy(port):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the server did not start; see {log_path}")
                time.sleep(0.25)
            yield port
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
