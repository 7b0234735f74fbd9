"""`capture_worker [--once] [--poll SECONDS]`: drain the capture queue.

Claims the oldest job due (FOR UPDATE SKIP LOCKED and a lease, memory_core/capture/queue.py),
extracts its thread through the configured model, and goes on; with nothing due it waits
`--poll` seconds (1) and looks again. Any number may run, on any machine, against one
database. SIGTERM or Ctrl-C stops it after the job in hand; a worker killed outright loses
nothing (its job is claimed again when the lease runs out). `serve` starts one when
extraction is on (MEMORY_EXTRACTOR=http). `--once` drains what is due and exits.
"""

import os
import signal
import time

from django.core.management.base import BaseCommand, CommandError
from django.db import Error as DatabaseError
from django.db import close_old_connections, connection

from memory_core.capture import extractor, queue


def positive_seconds(value: str) -> float:
    number = float(value)
    if not 0 < number <= 3600:
        raise ValueError(value)
    return number


class Command(BaseCommand):
    help = (
        "Drain the capture queue: extract each queued thread through the configured model "
        "(MEMORY_EXTRACTOR=http). Several may run at once; --once exits when nothing is due."
    )

    def add_arguments(self, parser):
        parser.add_argument("--once", action="store_true", help="exit when nothing is due")
        parser.add_argument(
            "--poll", type=positive_seconds, default=1.0, help="seconds between looks (1)"
        )
        # serve's worker: stop when serve is gone, whatever way it went.
        parser.add_argument("--parent", type=int, default=None, help="exit when PID exits")

    def handle(self, *args, once, poll, parent, **options):
        model = extractor.current()
        if model is None:
            raise CommandError("extraction is off: set MEMORY_EXTRACTOR=http (and its URL)")
        self.stopping = False
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._stop)
        name = queue.worker_name()
        verbose = options["verbosity"] >= 2
        self.stdout.write(f"capture worker {name}: {model.model} at {model.endpoint}")
        self.stdout.flush()
        totals = {}  # what became of each job: done, more, failed, dropped
        while not self.stopping:
            if parent is not None and os.getppid() != parent:
                break
            if not connection.in_atomic_block:  # (a test runs it inside one)
                close_old_connections()
            waiting = extractor.cooling_down()
            if waiting > 0:
                self._sleep(min(waiting, poll))
                continue
            try:
                job = queue.claim(name)
                outcome = queue.run_job(job, name) if job is not None else None
            except DatabaseError as error:  # the database restarting: look again shortly
                if once:
                    raise CommandError(f"database unavailable: {error}") from error
                self.stderr.write(f"capture worker: database unavailable ({error})")
                self._sleep(poll)
                continue
            if outcome is None:
                if once:
                    break
                self._sleep(poll)
                continue
            totals[outcome] = totals.get(outcome, 0) + 1
            if verbose:
                self.stdout.write(f"{job.actor.ref} {job.thread_ref}: {outcome}")
        summary = ", ".join(f"{n} {what}" for what, n in sorted(totals.items())) or "no jobs"
        self.stdout.write(f"capture worker {name} stopped: {summary}")

    def _stop(self, signum, frame):
        self.stopping = True

    def _sleep(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while not self.stopping and time.monotonic() < deadline:
            time.sleep(min(0.1, seconds))
