"""`manage.py ha_drill`: lose the primary under load and count what that cost.

The sequence, with writers busy throughout (remember, turn and message writes, and reads,
spread over two app servers that reach the cluster through one multi-host URL):

1. at a quarter of the time, SIGKILL the primary's PostgreSQL (postmaster and backends);
   Patroni fails over to the synchronous standby; the old primary's agent is then stopped,
   so the node stays down;
2. at half time, SIGKILL a replica's PostgreSQL (its agent restarts it);
3. at 70 %, start the old primary's agent again: it rewinds (pg_rewind) and follows the new
   primary, without a fresh base backup (its agent's log says pg_rewind succeeded and no base
   backup was taken; the data directory is the same one);
4. when the time is up: every acknowledged write is looked up on the final primary, each
   idempotent write is counted once, and the ledger's chains are verified.

A writer retries a remember or a turn that got no answer or a 503 with the same
(run_id, tool_call_id) / run_id, as an agent's client would: the API makes both idempotent,
so a retried write that had in fact committed is found, not written again. A message has no
idempotency key: it is retried only after a 503 (the transaction was rolled back).
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from memory_console.ha.cluster import DATABASE, Cluster, ClusterError, wait_for
from memory_console.loadgen import server
from memory_console.loadgen.client import request

TENANT = "drill"
RETRY_SECONDS = 90  # a writer gives up on one write after this long
# The demo organisation (what `serve --demo` loads) beside the drill's own tenant, so the
# drill runs at demo size; the writers work in the drill's tenant.
SEED = """
import io, json
from memory_console.demo import load_demo
load_demo(stdout=io.StringIO())
from memory_core import actors
from memory_core.accounts import keys
from memory_core.accounts.principals import Principal
from memory_core.models import Scope
system = Principal.system("cli:ha_drill")
world = Scope.objects.get(token="global")
scope, _ = actors.ensure_scope("tenant:{tenant}", world, principal=system)
key, secret = keys.create_api_key("ha drill", scope, principal=system)
print(json.dumps({{"secret": secret}}))
"""


@dataclass
class Ledger:
    """What the writers saw, shared between their threads."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    acked_memories: list[str] = field(default_factory=list)
    acked_turns: list[str] = field(default_factory=list)
    acked_messages: list[str] = field(default_factory=list)
    acked_at: list[float] = field(default_factory=list)  # monotonic times of acked writes
    failed: int = 0
    status_500: int = 0
    statuses: dict = field(default_factory=dict)
    gave_up: int = 0

    def saw(self, status) -> None:
        with self.lock:
            self.statuses[str(status)] = self.statuses.get(str(status), 0) + 1
            if status is None or status >= 400:
                self.failed += 1
            if status == 500:
                self.status_500 += 1


class Writers:
    def __init__(self, ports: list[int], secret: str, count: int):
        self.ports = ports
        self.headers = {"Authorization": f"Bearer {secret}"}
        self.count = count
        self.stopping = threading.Event()
        self.seen = Ledger()
        self.threads = [
            threading.Thread(target=self._run, args=(n,), daemon=True) for n in range(count)
        ]

    def start(self) -> None:
        for thread in self.threads:
            thread.start()

    def stop(self) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=RETRY_SECONDS + 30)

    def _send(self, n: int, method: str, path: str, body=None, *, retry: str):
        """Send until acknowledged. retry='any': on no answer or a 503 (idempotent writes);
        '503': only on a 503 (a message). Returns the answer, or None when given up."""
        deadline = time.monotonic() + RETRY_SECONDS
        attempt = 0
        while True:
            port = self.ports[(n + attempt) % len(self.ports)]
            attempt += 1
            answer = request(port, method, path, body=body, headers=self.headers, timeout=30)
            self.seen.saw(answer.status)
            if answer.status is not None and answer.status < 300:
                return answer
            retriable = answer.status == 503 or (retry == "any" and answer.status is None)
            if not retriable or time.monotonic() > deadline:
                with self.seen.lock:
                    self.seen.gave_up += 1
                return None
            time.sleep(0.2)

    def _run(self, n: int) -> None:
        actor = f"w{n}"
        i = 0
        while not self.stopping.is_set():
            i += 1
            fact = f"writer {n} wrote fact number {i} ({secrets.token_hex(4)})"
            answer = self._send(
                n,
                "POST",
                "/api/v1/memories",
                {
                    "actor": actor,
                    "key": f"fact-{i}",
                    "fact": fact,
                    "run_id": f"run-{n}-{i}",
                    "tool_call_id": "call-1",
                    "thread_id": f"thread-{n}",
                },
                retry="any",
            )
            if answer is not None:
                self._ack("acked_memories", answer.json()["id"])
            answer = self._send(
                n,
                "POST",
                "/api/v1/turns",
                {"actor": actor, "run_id": f"turn-{n}-{i}", "query": f"fact number {i}"},
                retry="any",
            )
            if answer is not None:
                self._ack("acked_turns", f"turn-{n}-{i}")
            answer = self._send(
                n,
                "POST",
                f"/api/v1/threads/thread-{n}/messages",
                {"actor": actor, "role": "user", "text": f"message {n}-{i}"},
                retry="503",
            )
            if answer is not None:
                self._ack("acked_messages", answer.json()["id"])
            # A read, whose answer is not a write but must not be a 500 either.
            self.seen.saw(
                request(
                    self.ports[n % len(self.ports)],
                    "GET",
                    f"/api/v1/memories?actor={actor}&limit=5",
                    headers=self.headers,
                    timeout=30,
                ).status
            )

    def _ack(self, kind: str, value: str) -> None:
        with self.seen.lock:
            getattr(self.seen, kind).append(value)
            self.seen.acked_at.append(time.monotonic())


def longest_gap(times: list[float], since: float, until: float) -> float:
    """The longest stretch between `since` and `until` with no acknowledged write."""
    points = sorted(t for t in times if since <= t <= until)
    edges = [since, *points, until]
    return max(b - a for a, b in zip(edges, edges[1:], strict=False))


def run(
    directory: Path,
    *,
    nodes: int = 3,
    seconds: float = 60,
    writers: int = 4,
    keep: bool = False,
    say=print,
) -> dict:
    cluster = Cluster.create(directory, nodes)
    apps: list[server.AppServer] = []
    try:
        say(f"starting etcd and {nodes} Patroni nodes in {cluster.directory}")
        cluster.start()
        say(f"primary: {cluster.leader()}; synchronous standby: {cluster.sync_standby()}")
        env = {"SECRET_KEY": secrets.token_urlsafe(48), "LOG_LEVEL": "WARNING"}
        for n in (1, 2):
            app = server.AppServer(
                cluster.app_url(),
                cluster.owner_url(),
                log_path=cluster.directory / f"app{n}.log",
                workers=2,
                env=env,
                access_log=False,
            )
            app.start()  # the first migrates; the second finds nothing to do
            apps.append(app)
        seeded = apps[0].manage("shell", "-c", SEED.format(tenant=TENANT))
        if seeded.returncode != 0:
            raise ClusterError(f"seeding failed:\n{seeded.stderr[-2000:]}")
        secret = json.loads(seeded.stdout.strip().splitlines()[-1])["secret"]

        load = Writers([app.port for app in apps], secret, writers)
        started = time.monotonic()
        say(f"load: {writers} writers on 2 app servers for {seconds:.0f} s")
        load.start()
        events = _faults(cluster, started, seconds, say)
        remaining = started + seconds - time.monotonic()
        if remaining > 0:
            time.sleep(remaining)
        load.stop()
        ended = time.monotonic()
        say("load stopped; checking")
        result = _check(cluster, apps[0], load.seen, events, started, ended)
        result["acked_file"] = str(cluster.directory / "acked.txt")
        (cluster.directory / "acked.txt").write_text(
            "".join(f"{uid}\n" for uid in load.seen.acked_memories)
        )
        result["primary_url"] = cluster.superuser_url(node=result["new_primary"])
        return result
    finally:
        # The app servers end with this process (they are started to); with --keep the
        # cluster stays, so the final primary can be examined until `--stop`.
        for app in apps:
            app.stop()
        for n in range(1, len(apps) + 1):
            cluster.pids.pop(f"app{n}", None)
        if keep:
            cluster.save()
        else:
            cluster.stop()


def _faults(cluster: Cluster, started: float, seconds: float, say) -> dict:
    def at(fraction: float) -> None:
        delay = started + seconds * fraction - time.monotonic()
        if delay > 0:
            time.sleep(delay)

    old_primary = cluster.leader()
    if old_primary is None:
        raise ClusterError("no primary before the drill")
    data_dir_inode = cluster.node(old_primary).data_dir.stat().st_ino

    at(0.25)
    killed_at = time.monotonic()
    say(f"SIGKILL to the primary's PostgreSQL ({old_primary})")
    cluster.kill_postgres(old_primary)
    new_primary = wait_for(
        lambda: (lambda leader: leader if leader not in (None, old_primary) else None)(
            cluster.leader()
        ),
        timeout=120,
        what="a new primary",
        interval=0.1,
    )
    promotion = time.monotonic() - killed_at
    say(f"{new_primary} promoted after {promotion:.1f} s; {old_primary} stays down")
    cluster.stop_agent(old_primary)

    at(0.5)
    replicas = [n.name for n in cluster.nodes if n.name not in (old_primary, new_primary)]
    replica_killed_at = None
    if replicas:
        replica_killed_at = time.monotonic()
        say(f"SIGKILL to a replica's PostgreSQL ({replicas[0]})")
        cluster.kill_postgres(replicas[0])

    at(0.7)
    say(f"starting {old_primary} again: it must rejoin as a replica (pg_rewind)")
    rejoin_started = time.monotonic()
    log_offset = _agent_log_size(cluster, old_primary)
    cluster.start_node(old_primary)

    def rejoined():
        return any(
            m["name"] == old_primary and m.get("state") == "streaming" for m in cluster.members()
        )

    wait_for(rejoined, timeout=180, what=f"{old_primary} to stream from {new_primary}")
    rejoin = time.monotonic() - rejoin_started
    say(f"{old_primary} streams again after {rejoin:.1f} s")
    return {
        "old_primary": old_primary,
        "new_primary": new_primary,
        "killed_at": killed_at,
        "replica_killed_at": replica_killed_at,
        "promotion_seconds": round(promotion, 2),
        "rejoin_seconds": round(rejoin, 2),
        "rewound": _rewound(cluster, old_primary, log_offset, data_dir_inode),
    }


def _agent_log(cluster: Cluster, name: str) -> Path:
    return cluster.node(name).root / "log" / "patroni.log"


def _agent_log_size(cluster: Cluster, name: str) -> int:
    try:
        return _agent_log(cluster, name).stat().st_size
    except FileNotFoundError:
        return 0


def _rewound(cluster: Cluster, name: str, offset: int, inode: int) -> bool:
    """Did the node rejoin by pg_rewind, in the data directory it had, with no base backup?
    (Patroni logs both; pg_rewind itself deletes files the source lacks, so a marker file in
    the data directory would not survive it.)"""
    with open(_agent_log(cluster, name), "rb") as log:
        log.seek(offset)
        since = log.read().decode(errors="replace")
    return (
        "pg_rewind exit code=0" in since
        and "basebackup" not in since
        and cluster.node(name).data_dir.stat().st_ino == inode
    )


def _check(cluster: Cluster, app, seen: Ledger, events: dict, started: float, ended: float):
    import psycopg

    final = cluster.leader()
    with psycopg.connect(cluster.superuser_url(node=final), autocommit=True) as conn:
        present = {
            row[0]
            for row in conn.execute(
                "SELECT uid FROM memory_core_memory WHERE uid = ANY(%s)", [seen.acked_memories]
            )
        }
        # The constraints make a second row per (actor, run, tool call) or (actor, run)
        # impossible; counted anyway, and so are messages, which have no such key (each
        # text the drill sends is unique).
        duplicated = conn.execute(
            """WITH drill AS (SELECT id FROM memory_core_actor WHERE ref LIKE %(tenant)s)
               SELECT
                 (SELECT count(*) - count(DISTINCT (origin_actor_id, origin_run, origin_tool_call))
                    FROM memory_core_memory
                   WHERE origin_actor_id IN (SELECT id FROM drill) AND origin_tool_call IS NOT NULL)
               + (SELECT count(*) - count(DISTINCT (actor_id, run_id))
                    FROM memory_core_digest WHERE actor_id IN (SELECT id FROM drill))
               + (SELECT count(*) - count(DISTINCT m.text)
                    FROM memory_core_message m JOIN memory_core_thread t ON t.id = m.thread_id
                   WHERE t.actor_id IN (SELECT id FROM drill))""",
            {"tenant": f"{TENANT}/%"},
        ).fetchone()[0]
        messages = {
            row[0]
            for row in conn.execute(
                "SELECT uid FROM memory_core_message WHERE uid = ANY(%s)", [seen.acked_messages]
            )
        }
    verified = app.manage("verify_ledger")
    kill = events["killed_at"]
    result = {
        "acknowledged": len(seen.acked_memories) + len(seen.acked_turns) + len(seen.acked_messages),
        "acknowledged_memories": len(seen.acked_memories),
        "acknowledged_turns": len(seen.acked_turns),
        "acknowledged_messages": len(seen.acked_messages),
        "lost": (len(seen.acked_memories) - len(present))
        + (len(seen.acked_messages) - len(messages)),
        "duplicated": int(duplicated),
        "unavailable_seconds": round(longest_gap(seen.acked_at, kill, ended), 2),
        "replica_unavailable_seconds": round(
            longest_gap(seen.acked_at, events["replica_killed_at"], ended), 2
        )
        if events["replica_killed_at"]
        else 0.0,
        "failed_requests": seen.failed,
        "status_500": seen.status_500,
        "statuses": seen.statuses,
        "gave_up": seen.gave_up,
        "promotion_seconds": events["promotion_seconds"],
        "rejoin_seconds": events["rejoin_seconds"],
        "rewound_without_base_backup": events["rewound"],
        "old_primary": events["old_primary"],
        "new_primary": final,
        "ledger_verified": verified.returncode == 0,
        "ledger_report": (verified.stdout or verified.stderr).strip().splitlines()[-1:],
        "seconds": round(ended - started, 1),
        "database": DATABASE,
    }
    return result
