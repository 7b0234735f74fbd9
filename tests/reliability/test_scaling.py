"""Past one machine, against real servers on the private PostgreSQL:

- two `manage.py serve` processes on two ports behave as one: the mixed load alternates
  between them with the same checks as tests/reliability/test_load.py, and a console
  session, its login throttling and its last chain check carry from one to the other;
- the same load through PgBouncer in transaction mode (DATABASE_POOLER=pgbouncer);
- /metrics adds up every gunicorn worker's samples;
- readiness while the database is down.

Each run is bounded: RELIABILITY_SCALING_SECONDS (20 by default) of load per run.
"""

import itertools
import os
import threading
import time

import pytest

from memory_console.loadgen.pooler import PgBouncer, binary, user_of

from .conftest import ADMIN_PASSWORD, ADMINS, LOGS
from .harness import (
    Api,
    AppServer,
    ConsoleSession,
    chain_problems,
    forget_problems,
    get,
    ledger_problems,
    run_seed,
    wait_until,
)
from .load import LoadClient, run_clients, summarise, verify_keys

pytestmark = pytest.mark.reliability

SECONDS = float(os.environ.get("RELIABILITY_SCALING_SECONDS", "20"))
CLIENTS = 12
ACTORS = 6


class Alternating(Api):
    """The agent API with one key, each request to the next of several servers."""

    def __init__(self, ports: list[int], secret: str, timeout: float = 120):
        self.ports = ports
        self._next = itertools.count()
        self._lock = threading.Lock()
        super().__init__(ports[0], secret, timeout)

    @property
    def port(self) -> int:
        with self._lock:
            return self.ports[next(self._next) % len(self.ports)]

    @port.setter
    def port(self, value) -> None:
        pass  # set by Api.__init__; the ports list decides


@pytest.fixture(scope="module")
def scale_key(app):
    spec = {"scopes": [["tenant:scale", "global"]], "keys": [["scale", "tenant:scale"]]}
    return run_seed(app.env, spec)["keys"]["scale"]


@pytest.fixture(scope="module")
def second(app, private_pg):
    """A second server on the same database, with the first one's SECRET_KEY."""
    other = AppServer(private_pg, LOGS, workers=2)
    other.env["SECRET_KEY"] = app.env["SECRET_KEY"]
    try:
        other.start()
        yield other
    finally:
        other.stop()


def run_load(api, prefix: str, private_pg, app) -> dict:
    stop = threading.Event()
    started = time.monotonic()
    clients = [
        LoadClient(
            api,
            i,
            f"{prefix}-{i % ACTORS}",
            keys=4,
            stop=stop,
            deadline=started + SECONDS,
            max_requests=5000,
            seed=7000 + i,
        )
        for i in range(CLIENTS)
    ]
    run_clients(clients, timeout=SECONDS + 180)
    elapsed = time.monotonic() - started
    samples = [s for c in clients for s in c.result.samples]
    failures = [f for c in clients for f in c.result.failures]
    keys = [k for c in clients for k in c.result.keys]
    with private_pg.connect() as conn:
        checked = verify_keys(api, conn, keys)
        problems = chain_problems(conn) + ledger_problems(conn) + forget_problems(conn)
    verified = app.manage("verify_ledger")
    server_errors = [s for s in samples if s.status is None or s.status >= 500]
    stats = summarise(samples)
    turns = stats["by_kind"].get("turn", 0)
    assert not server_errors, f"{len(server_errors)} 5xx or unanswered: {server_errors[:3]}"
    assert not failures, failures[:5]
    assert not checked["failures"], checked["failures"][:10]
    assert not problems, problems[:10]
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert len(samples) >= 100 and checked["writes_verified"] >= 10
    return {
        "requests": len(samples),
        "seconds": round(elapsed, 1),
        "throughput_rps": round(len(samples) / elapsed, 1),
        "turns_per_second": round(turns / elapsed, 1),
        "writes_verified": checked["writes_verified"],
        "probes": checked["probes"],
        "server_errors": 0,
        "faults_injected": 0,
        "p95_ms": stats["latency_ms"]["p95"],
    }


def test_two_servers_behave_as_one_under_load(healthy, second, scale_key, private_pg, figures):
    api = Alternating([healthy.port, second.port], scale_key)
    result = run_load(api, "two", private_pg, healthy)
    figures.record(
        "two_servers_load",
        **result,
        summary=(
            f"{result['requests']} requests alternating over 2 servers in {result['seconds']}s "
            f"({result['throughput_rps']}/s), 0 5xx, {result['writes_verified']} writes verified"
        ),
    )


def test_a_console_session_carries_from_one_server_to_the_other(healthy, second, private_pg):
    session = ConsoleSession(healthy.port)
    session.login(ADMINS[0], ADMIN_PASSWORD)
    session.port = second.port
    assert session.get("/scopes/").status == 200
    # The chain check run on one server is the last check the other shows.
    session.port = healthy.port
    verify = session.post("/ledger/verify/", {"next": "/ledger/"})
    assert verify.status in (200, 302)
    session.port = second.port
    page = session.get("/ledger/")
    assert page.status == 200 and b'class="verdict verdict-ok"' in page.body
    # Logging out on one ends the session on both.
    session.port = healthy.port
    assert session.post("/logout/", {}).status in (200, 302)
    session.port = second.port
    assert session.get("/scopes/").status == 302


def test_login_throttling_counts_failures_on_every_server(healthy, second, private_pg):
    username = "nobody-scale"
    try:
        answers = []
        for n in range(6):
            session = ConsoleSession(healthy.port if n % 2 == 0 else second.port)
            session.get("/login/")
            answers.append(
                session.post("/login/", {"username": username, "password": "wrong"}).status
            )
        assert answers[:5] == [200] * 5  # the form again, with an error
        assert answers[5] == 429  # the sixth, on the second server, counts the first five
    finally:
        with private_pg.connect() as conn:
            conn.execute("DELETE FROM memory_core_loginattempt WHERE username = %s", [username])


def test_metrics_add_up_every_worker(healthy):
    before = _requests_counted(healthy.port)
    for _ in range(40):
        assert get(healthy.port, "/api/v1/health/live").status == 200
    after = _requests_counted(healthy.port)
    assert after - before >= 40  # two workers answered them; one scrape sees them all
    text = get(healthy.port, "/metrics").body.decode()
    assert "memory_http_request_seconds_bucket" in text
    assert 'memory_db_pool_connections{state="size"}' in text


def _requests_counted(port: int) -> float:
    text = get(port, "/metrics").body.decode()
    total = 0.0
    for line in text.splitlines():
        if line.startswith("memory_http_requests_total{") and "health-live" in line:
            total += float(line.rsplit(" ", 1)[1])
    return total


@pytest.mark.skipif(binary() is None, reason="pgbouncer is not installed")
def test_load_through_pgbouncer_in_transaction_mode(healthy, scale_key, private_pg, figures):
    with PgBouncer(private_pg.app_url, [user_of(private_pg.app_url)]) as bouncer:
        pooled = AppServer(private_pg, LOGS, workers=2)
        pooled.env.update(
            DATABASE_URL=bouncer.url(user_of(private_pg.app_url), "reliability"),
            DATABASE_POOLER="pgbouncer",
            SECRET_KEY=healthy.env["SECRET_KEY"],
        )
        try:
            pooled.start()
            result = run_load(Api(pooled.port, scale_key), "pooled", private_pg, pooled)
            console = ConsoleSession(pooled.port)
            console.login(ADMINS[1], ADMIN_PASSWORD)
            assert console.get("/ledger/").status == 200
        finally:
            pooled.stop()
    figures.record(
        "pgbouncer_load",
        **result,
        summary=(
            f"{result['requests']} requests through PgBouncer (transaction mode) in "
            f"{result['seconds']}s ({result['throughput_rps']}/s), 0 5xx"
        ),
    )


def test_readiness_while_the_database_is_down(healthy, private_pg):
    assert get(healthy.port, "/api/v1/health/ready").status == 200
    private_pg.kill()
    try:
        ready = wait_until(
            lambda: (
                (r := get(healthy.port, "/api/v1/health/ready", timeout=30)).status == 503 and r
            ),
            timeout=60,
            what="readiness to fail",
        )
        assert ready.json() == {
            "status": "not ready",
            "database": "unreachable",
            "migrations": "unknown",
        }
        at_root = get(healthy.port, "/health/ready", timeout=30)
        assert at_root.status == 503 and at_root.json() == ready.json()
        for path in ("/api/v1/health/live", "/health/live"):
            live = get(healthy.port, path, timeout=30)
            assert live.status == 200 and live.json() == {"status": "ok"}, path
        health = get(healthy.port, "/api/v1/health", timeout=30)
        assert health.status == 503
        assert health.json() == {"status": "degraded", "database": "unreachable"}
    finally:
        private_pg.restart()
    wait_until(
        lambda: get(healthy.port, "/api/v1/health/ready", timeout=30).status == 200,
        timeout=120,
        interval=1,
        what="readiness to come back",
    )
