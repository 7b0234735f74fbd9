"""`serve [--demo] [--port N] [--host H] [--workers N] [--threads N]`: migrate, then serve
with gunicorn.

gunicorn runs in this process (its BaseApplication), forking its workers from here, not as a
separate `gunicorn` executable. That matters for the embedded PostgreSQL: this process's
first connection (the migration) started (or joined) it and exported DATABASE_URL, before
any fork, so the workers inherit the URL and reach the same server, and the server stops
when this process exits.

Two database roles: migrations run as the owner of the tables (the `owner` alias,
DATABASE_OWNER_URL), the demo and every request as the server's own role (`default`,
DATABASE_URL), which owns nothing (memory_core/db/privileges.py).
"""

import gc
import os
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connections
from gunicorn.app.base import BaseApplication

from memory_console import capture_process
from memory_console.demo import DemoConflict, load_demo, rerun_notice
from memory_core.db.privileges import OWNER_ALIAS
from memory_core.recall import providers

LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def port_number(value: str) -> int:
    number = int(value)
    if not 1 <= number <= 65535:
        raise ValueError(value)
    return number


def positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise ValueError(value)
    return number


def bind_address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"


class ConsoleApplication(BaseApplication):
    """gunicorn, configured in code, serving settings.WSGI_APPLICATION."""

    def __init__(self, options: dict):
        self.options = options
        super().__init__()

    def load_config(self):
        for name, value in self.options.items():
            self.cfg.set(name, value)
        # gunicorn >= 25.1 opens a control socket at one path per OS user, so two servers on
        # one machine (say ports 8000 and 8011) would contend for it; nothing here uses it.
        if "control_socket_disable" in self.cfg.settings:
            self.cfg.set("control_socket_disable", True)

    def load(self):
        from django.core.servers.basehttp import get_internal_wsgi_application
        from django.urls import get_resolver

        # settings.WSGI_APPLICATION, as runserver finds it: the core names no delivery module.
        application = get_internal_wsgi_application()
        get_resolver().check()  # imports every view and builds the API's schemas now
        # The embedder's model (wordllama: 16 MB of weights), loaded once and shared by the
        # workers rather than loaded by each on its first write. A request embeds one short
        # text: the tokenizer's thread pool would only compete, in every worker, with the
        # other workers and PostgreSQL for the machine's cores.
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        embedder = providers.current()
        if embedder is not None:
            embedder.warm()
        # Everything loaded so far lives as long as the process. Left to the collector, each
        # full collection walks all of it again (~30 ms, once every hundred-odd requests: it
        # was the whole of the p99 latency of a turn); frozen before the fork, it is never
        # walked, and the workers share its pages instead of copying them on first touch.
        gc.freeze()
        return application


# Each worker runs its requests on a few threads (gunicorn's gthread worker): a turn spends
# about 40 % of its time waiting for PostgreSQL, and a sync worker sat idle through every
# wait. With two threads a worker runs one request's Python while another's query runs:
# at 1m, 2 workers served 170 turns/s as sync workers and 214 with two threads each (the
# README's "Performance"). More threads than that only queue behind the GIL. The gthread
# worker also keeps client connections alive between requests.
DEFAULT_THREADS = 2


def gunicorn_options(host: str, port: int, workers: int, threads: int = DEFAULT_THREADS) -> dict:
    return {
        "bind": bind_address(host, port),
        "workers": workers,
        "worker_class": "gthread",
        "threads": threads,
        "proc_name": "memory-console",
        # Load the app before forking: a broken app fails here, once, not in every worker.
        "preload_app": True,
        # One JSON object per request (path, the query's parameter names but never their
        # values, the id the access-log row carries) and per error-log message, written by
        # the logger settings.GUNICORN_LOGGER names, not by a format string: a format string
        # pastes the request's text into the line unescaped and whole, query values included.
        "logger_class": settings.GUNICORN_LOGGER,
        "accesslog": "-",
        "errorlog": "-",
        "loglevel": "info",
        # A dead worker's live gauges leave the metrics (memory_console/metrics.py).
        "child_exit": _worker_exited,
    }


def _worker_exited(server, worker) -> None:
    """gunicorn's child_exit hook: a dead worker's live gauges stop counting."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)


def prepare_metrics_dir(port: int) -> None:
    """Point prometheus_client's multiprocess mode at a directory of this server's own
    (settings.METRICS_DIR/<port>: two servers on one machine keep apart), emptied of an
    earlier run's metric files, before anything imports the client library: it picks its
    storage at import."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        path = Path(os.environ["PROMETHEUS_MULTIPROC_DIR"])
    else:
        path = Path(settings.METRICS_DIR) / str(port)
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(path)
    path.mkdir(parents=True, exist_ok=True)
    for stale in path.glob("*.db"):  # the previous run's samples (and nothing else)
        stale.unlink(missing_ok=True)


def close_database_pools() -> None:
    """Close this process's connections and pools before gunicorn forks.

    A psycopg pool's sockets and threads do not survive a fork: a worker sharing them with
    its siblings would interleave their traffic. Each worker opens its own pool on demand.
    """
    for connection in connections.all():
        connection.close()
        if getattr(connection, "close_pool", None) is not None:
            connection.close_pool()


class Command(BaseCommand):
    help = (
        "Migrate the database, collect static files, optionally load the demo organisation "
        "(--demo), and serve the console and API with gunicorn (default 127.0.0.1:8000)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--demo", action="store_true", help="load the demo organisation")
        parser.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
        parser.add_argument("--port", type=port_number, default=8000, help="port (8000)")
        parser.add_argument("--workers", type=positive, default=2, help="worker processes (2)")
        parser.add_argument(
            "--threads",
            type=positive,
            default=DEFAULT_THREADS,
            help=f"request threads per worker ({DEFAULT_THREADS})",
        )

    def execute(self, *args, **options):
        # Before the system checks, which import the URLs and so the metrics.
        prepare_metrics_dir(options["port"])
        return super().execute(*args, **options)

    def handle(self, *args, demo, host, port, workers, threads, **options):
        inner_verbosity = max(options["verbosity"] - 1, 0)
        self.stdout.write("Migrating the database ...")
        call_command(
            "migrate",
            database=OWNER_ALIAS,
            interactive=False,
            verbosity=inner_verbosity,
            stdout=self.stdout,
        )
        call_command("collectstatic", interactive=False, verbosity=0)
        if demo:
            self._demo()
        close_database_pools()
        url = f"http://{bind_address(host, port)}/"
        self.stdout.write(
            f"Serving Memory Console at {url} (API: {url}api/v1/), {workers} worker(s) of "
            f"{threads} thread(s)."
        )
        if host not in LOOPBACK:
            self.stdout.write(
                "Listening beyond this machine: set ALLOWED_HOSTS to the names clients use."
            )
        self.stdout.write("Press Ctrl-C to stop.")
        self.stdout.flush()
        capture_worker = capture_process.start(self.stdout)  # with extraction on only
        try:
            ConsoleApplication(gunicorn_options(host, port, workers, threads)).run()
        finally:
            capture_process.stop(capture_worker)

    def _demo(self) -> None:
        try:
            result = load_demo(stdout=self.stdout)
        except DemoConflict as error:
            raise CommandError(f"cannot load the demo: {error}") from error
        if not result["loaded"]:
            # Users, their passwords and their sessions stay as they are (demo.rerun_notice).
            self.stdout.write("The demo organisation is already loaded (tenant:acme exists).")
            for line in rerun_notice():
                self.stdout.write(line)
            return
        self.stdout.write("Demo organisation loaded. Console logins:")
        for login in result["logins"]:
            password = login["password"] or "(existing account; password unchanged)"
            self.stdout.write(f"  {login['username']:<6} {password}   {login['role']}")
        self.stdout.write("API keys (Authorization: Bearer <secret>):")
        for key in result["api_keys"]:
            self.stdout.write(f"  {key['reach']:<14} {key['secret']}")
