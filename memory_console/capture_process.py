"""`serve`'s capture worker: with extraction on (MEMORY_EXTRACTOR=http), `serve` starts one
`manage.py capture_worker` beside gunicorn, so the README's two commands still do
everything. It is a process of its own, not a gunicorn worker: a slow model never holds a
request thread. It runs with serve's environment (the embedded database's URL included,
exported by serve's first connection), stops when serve stops, and exits by itself if
serve is killed outright (`--parent`). More workers, on any machine, are started by hand.
"""

import os
import subprocess
import sys

from django.conf import settings

from memory_core.capture import extractor


def start(stdout) -> subprocess.Popen | None:
    """The worker, started; None when extraction is off."""
    if not extractor.enabled():
        return None
    command = [
        sys.executable,
        str(settings.BASE_DIR / "manage.py"),
        "capture_worker",
        "--parent",
        str(os.getpid()),
    ]
    worker = subprocess.Popen(command, cwd=settings.BASE_DIR, stdin=subprocess.DEVNULL)
    stdout.write(
        f"Capture worker started (pid {worker.pid}, model {settings.MEMORY_EXTRACTOR_MODEL})."
    )
    return worker


def stop(worker: subprocess.Popen | None) -> None:
    """SIGTERM (it finishes the job in hand), then SIGKILL after 30 s."""
    if worker is None or worker.poll() is not None:
        return
    worker.terminate()
    try:
        worker.wait(timeout=30)
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.wait(timeout=10)
