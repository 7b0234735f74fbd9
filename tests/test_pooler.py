"""Behind PgBouncer in transaction mode: what must change, and that it does.

Debian's PgBouncer (1.18) hands each transaction whichever server connection is free, and
does not follow server-side prepared statements between them (that came in 1.21). These
tests show the failure with a real PgBouncer, and that DATABASE_POOLER=pgbouncer turns the
app's prepared statements and its startup `options` off. The app under load through the
pooler is in tests/reliability/test_scaling.py.
"""

import json
import subprocess
import sys

import psycopg
import pytest
from django.conf import settings
from django.db import connection

from memory_console.loadgen import pooler
from memory_core.db import prepared

# slow: each settings check is a fresh interpreter, and the others run PgBouncer.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(pooler.binary() is None, reason="pgbouncer is not installed"),
]

SHOW = """
import json, django
django.setup()
from django.conf import settings
d = settings.DATABASES
print(json.dumps({
    "pooler": settings.DATABASE_POOLER,
    "prepare_threshold": d["default"]["OPTIONS"].get("prepare_threshold"),
    "options": d["default"]["OPTIONS"].get("options"),
    "replicas": settings.DATABASE_REPLICAS,
    "replica1": {k: d["replica1"][k] for k in ("HOST", "PORT", "NAME", "USER")}
        if "replica1" in d else None,
    "mirror": d.get("replica1", {}).get("TEST", {}).get("MIRROR"),
}))
"""


def settings_with(**env) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", SHOW],
        env={
            "PATH": "/usr/bin:/bin",
            "DJANGO_SETTINGS_MODULE": "memory_console.settings",
            "DATABASE_URL": "postgresql://memory_app@db.internal:6432/memory_console",
            **env,
        },
        capture_output=True,
        text=True,
        cwd=settings.BASE_DIR,
        timeout=60,
    )
    assert done.returncode == 0 or env.get("DATABASE_POOLER") == "pgpool", done.stderr
    return json.loads(done.stdout) if done.returncode == 0 else {"error": done.stderr}


def test_settings_behind_pgbouncer_prepare_nothing_and_send_no_options():
    plain = settings_with()
    assert plain["pooler"] == "none"
    assert plain["prepare_threshold"] == 5 and "plan_cache_mode" in plain["options"]
    pooled = settings_with(DATABASE_POOLER="pgbouncer")
    assert pooled["pooler"] == "pgbouncer"
    assert pooled["prepare_threshold"] is None and pooled["options"] is None


def test_an_unknown_pooler_is_refused():
    refused = settings_with(DATABASE_POOLER="pgpool")
    assert "DATABASE_POOLER" in refused["error"]


def test_replica_urls_become_database_entries():
    found = settings_with(
        DATABASE_REPLICA_URLS="postgresql://memory_app@r1.internal/memory_console,"
        "postgresql://memory_app@r2.internal:5433/memory_console"
    )
    assert found["replicas"] == ["replica1", "replica2"]
    assert found["replica1"] == {
        "HOST": "r1.internal",
        "PORT": "",
        "NAME": "memory_console",
        "USER": "memory_app",
    }
    assert found["mirror"] == "default"
    assert settings_with()["replicas"] == []


@pytest.mark.django_db
def test_without_a_threshold_the_core_prepares_nothing():
    sql = "SELECT count(*) FROM memory_core_scope WHERE token = %s"
    connection.ensure_connection()
    conn = connection.connection
    before = conn.prepare_threshold
    try:
        conn.prepare_threshold = None
        for _ in range(3):
            prepared.fetch_one(sql, ["global"])
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_prepared_statements WHERE statement = %s",
                [sql.replace("%s", "$1")],
            )
            assert cursor.fetchone()[0] == 0
    finally:
        conn.prepare_threshold = before
    prepared.fetch_one(sql, ["global"])
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements WHERE statement = %s",
            [sql.replace("%s", "$1")],
        )
        assert cursor.fetchone()[0] == 1


@pytest.fixture
def bouncer(transactional_db):
    default = settings.DATABASES["default"]
    url = f"postgresql://{default['USER']}@/{default['NAME']}?host={default['HOST']}"
    if default["PORT"]:
        url += f"&port={default['PORT']}"
    with pooler.PgBouncer(url, [default["USER"]], pool_size=1) as running:
        yield running, default["USER"]


def test_prepared_statements_break_behind_pgbouncer_and_unprepared_ones_do_not(bouncer):
    """Two clients, one server connection (pool_size 1), transaction mode: what one client
    prepared is there, under the same name, when the other's transaction runs."""
    running, user = bouncer
    url = running.url(user)
    sql = "SELECT count(*) FROM memory_core_scope WHERE token = %s"
    with psycopg.connect(url, autocommit=True) as a, psycopg.connect(url, autocommit=True) as b:
        a.execute(sql, ["global"], prepare=True)
        with pytest.raises(psycopg.errors.DuplicatePreparedStatement):
            b.execute(sql, ["global"], prepare=True)
    with psycopg.connect(url, autocommit=True) as a, psycopg.connect(url, autocommit=True) as b:
        for conn in (a, b, a, b):
            assert conn.execute(sql, ["global"], prepare=False).fetchone() == (1,)


def test_pgbouncer_refuses_the_options_startup_parameter(bouncer):
    running, user = bouncer
    with pytest.raises(psycopg.OperationalError, match="unsupported startup parameter"):
        psycopg.connect(running.url(user), options="-c plan_cache_mode=force_generic_plan")
