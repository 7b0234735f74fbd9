"""Fixtures of the reliability suite: a private PostgreSQL and the real app server on it.

The package starts ONE private PostgreSQL (never the shared ./var/pgdata server) and one
`manage.py serve --workers 2` against it; each test works in its own tenant, so their checks
do not see each other's traffic. Everything is stopped when the package's last test is
done, also when a test fails: the app server's whole process group is killed, the private
server is stopped and its directory deleted (its log kept in bench-results/reliability-logs
with the app servers'). The figures of the run go to bench-results/reliability.json.
"""

import secrets

import pytest

from .harness import (
    PROJECT,
    AppServer,
    Figures,
    PrivatePostgres,
    get,
    reap_stale_servers,
    run_seed,
    wait_until,
)

RESULTS = PROJECT / "bench-results" / "reliability.json"
# The app servers' logs (gunicorn access lines, tracebacks), kept for a failed run.
LOGS = PROJECT / "bench-results" / "reliability-logs"

# Console users of the race test (admins of tenant:race), with throwaway passwords.
ADMIN_PASSWORD = "pw-" + secrets.token_urlsafe(12)
ADMINS = ("adm-a", "adm-b")

SEED = {
    "scopes": [
        ["tenant:load", "global"],
        ["tenant:crash", "global"],
        ["tenant:kill", "global"],
        ["tenant:race", "global"],
        ["tenant:erase", "global"],
    ],
    "keys": [
        ["load", "tenant:load"],
        ["crash", "tenant:crash"],
        ["kill", "tenant:kill"],
        ["race", "tenant:race"],
        ["erase", "tenant:erase"],
    ],
    "users": [
        [
            name,
            ADMIN_PASSWORD,
            [["tenant:race", "admin"], ["tenant:crash", "admin"], ["tenant:erase", "admin"]],
        ]
        for name in ADMINS
    ],
}

_written: dict = {}


@pytest.fixture(scope="package")
def figures():
    recorder = Figures()
    yield recorder
    if recorder.tests:
        _written["document"] = recorder.write(RESULTS)


@pytest.fixture(scope="package")
def private_pg():
    reap_stale_servers()
    LOGS.mkdir(parents=True, exist_ok=True)
    for old in LOGS.glob("*.log"):  # the logs of this run only
        old.unlink(missing_ok=True)
    server = PrivatePostgres()
    try:
        yield server
    finally:
        server.stop(keep_log=LOGS / "postgresql.log")


@pytest.fixture(scope="package")
def app(private_pg):
    server = AppServer(private_pg, LOGS, workers=2)
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="package")
def seeded(app):
    """{"keys": {name: secret}}: the API keys of the tenants above."""
    return run_seed(app.env, SEED)


@pytest.fixture
def healthy(app, private_pg, seeded):
    """The app answers /health 200 before the test starts (a previous test may have crashed
    the database or a worker; it restarts them, but recovery takes a moment)."""
    if not private_pg.processes():
        private_pg.restart()
    wait_until(
        lambda: get(app.port, "/api/v1/health", timeout=30).status == 200,
        timeout=120,
        interval=1,
        what="the app to be healthy",
    )
    return app


def pytest_terminal_summary(terminalreporter):
    document = _written.get("document")
    if not document:
        return
    totals = document["totals"]
    terminalreporter.section("reliability figures")
    terminalreporter.write_line(
        f"requests {totals['requests']}, faults injected {totals['faults_injected']}, "
        f"writes verified {totals['writes_verified']}, probes {totals['probes']} "
        f"({document['seconds']}s) -> {RESULTS.relative_to(PROJECT)}"
    )
    for name, values in document["tests"].items():
        summary = values.get("summary")
        if summary:
            terminalreporter.write_line(f"  {name}: {summary}")
