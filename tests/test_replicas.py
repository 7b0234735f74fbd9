"""The replica router against a real streaming replica (memory_console/routers.py).

The replica is made from the tests' own embedded PostgreSQL with its `pg_basebackup -R`
(tests/replica.py). Its replay is paused to make it stale on purpose: a page served from it
then misses the newest rows, which is how these tests see where a read went. Every test
commits (transactional_db): a replica only sees committed WAL.
"""

import logging
import time

import pytest
from django.conf import settings
from django.db import connections
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext

from memory_console import routers
from memory_core import writes
from memory_core.models import Memory
from tests.helpers import bearer
from tests.replica import StreamingReplica

ALIAS = "replica1"
# The replica is one of the test's databases (its queries allowed), and a mirror of
# `default` (never flushed: it is read-only, and replays the primary's flush).
# slow: starts a streaming replica of the test database and waits out its lag.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True, databases=["default", ALIAS]),
]


# Autouse and module-scoped: registered before pytest-django checks the test's databases.
@pytest.fixture(scope="module", autouse=True)
def replica(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        default = connections["default"]
        default.ensure_connection()
        streaming = StreamingReplica(
            default.settings_dict["HOST"],
            default.settings_dict["PORT"],
            default.settings_dict["NAME"],
        ).start()
    entry = {
        key: value
        for key, value in default.settings_dict.items()
        if key != "EMBEDDED_PGDATA"  # never (re)started as the embedded server
    }
    entry.update(
        TEST={**entry["TEST"], "MIRROR": "default"},
        HOST=streaming.host,
        PORT=streaming.port,
        OPTIONS={
            **{k: v for k, v in entry["OPTIONS"].items() if k != "pool"},
            "connect_timeout": 2,
            "pool": {"min_size": 0, "max_size": 4, "timeout": 2, "reconnect_timeout": 2},
        },
    )
    connections.settings[ALIAS] = entry
    try:
        yield streaming
    finally:
        connections[ALIAS].close()
        if getattr(connections[ALIAS], "close_pool", None):
            connections[ALIAS].close_pool()
        del connections.settings[ALIAS]
        streaming.stop()


@pytest.fixture
def routed(replica):
    """The router on, with this replica; its replay running again afterwards."""
    routers.replicas.forget()
    with override_settings(
        DATABASE_REPLICAS=[ALIAS], REPLICA_MAX_LAG_SECONDS=300, REPLICA_RETRY_SECONDS=5
    ):
        try:
            yield replica
        finally:
            if replica.proc.poll() is None:
                replica.resume()
            routers.replicas.forget()


@pytest.fixture
def people(django_user_model):
    writer = django_user_model.objects.create_superuser("writer", "w@example.com", "pw")
    reader = django_user_model.objects.create_superuser("reader", "r@example.com", "pw")
    return writer, reader


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def caught_up(replica) -> None:
    replica.has_replayed(routers.primary_lsn())


def stale_from_here_on(replica) -> int:
    """Pause replay once the replica has everything so far; returns that position."""
    lsn = routers.primary_lsn()
    replica.has_replayed(lsn)
    replica.pause()
    return lsn


def published(org, operator, key="tz", text="times are UTC") -> Memory:
    return writes.publish(org.acme, key, text, principal=operator)


def test_console_reads_go_to_the_replica(routed, org, operator, people):
    _, reader = people
    older = published(org, operator, "units", "kilometres")
    caught_up(routed)
    stale_from_here_on(routed)
    newer = published(org, operator)
    routed.has_received(routers.primary_lsn())

    client = logged_in(reader)
    # The replica has the older memory, not the newer one: the page was read there.
    assert client.get(f"/memories/{older.uid}/").status_code == 200
    assert client.get(f"/memories/{newer.uid}/").status_code == 404
    routed.resume()
    caught_up(routed)
    assert client.get(f"/memories/{newer.uid}/").status_code == 200


def test_an_export_streams_from_the_replica_its_view_chose(routed, org, operator, people):
    _, reader = people
    for n in range(3):
        published(org, operator, f"k{n}", f"fact {n}")
    caught_up(routed)

    client = logged_in(reader)
    response = client.get("/exports/ledger.jsonl")
    assert response.status_code == 200
    # Django iterates the streamed body after the middleware has returned: its batches
    # must still be read on the replica the view chose, not on the primary.
    with (
        CaptureQueriesContext(connections[ALIAS]) as on_replica,
        CaptureQueriesContext(connections["default"]) as on_primary,
    ):
        body = b"".join(response.streaming_content).decode()
    assert "memory_core_ledgerevent" in " ".join(q["sql"] for q in on_replica.captured_queries)
    assert not any("memory_core_ledgerevent" in q["sql"] for q in on_primary.captured_queries)
    assert body.count("memory.published") >= 3
    # The access-log row of the export is a write: on the primary.
    assert any("memory_core_accesslog" in q["sql"] for q in on_primary.captured_queries)


def test_the_writer_reads_their_console_write_at_once(routed, org, people):
    writer, reader = people
    stale_from_here_on(routed)
    client = logged_in(writer)
    response = client.post(
        "/scopes/tenant:acme/publish/", {"key": "fy", "text": "fiscal year starts in October"}
    )
    assert response.status_code == 302
    memory = Memory.objects.get(key="fy")
    written = routers.parse_lsn(client.session[routers.LSN_KEY])
    assert written is not None and written >= routers.parse_lsn(routed.positions()[1])
    routed.has_received(routers.primary_lsn())

    # The writer: from the primary until the replica has replayed their write.
    for _ in range(3):
        assert client.get(f"/memories/{memory.uid}/").status_code == 200
        assert b"fiscal year starts in October" in client.get("/scopes/tenant:acme/").content
    # Anyone else may read the replica's older state meanwhile.
    assert logged_in(reader).get(f"/memories/{memory.uid}/").status_code == 404
    # Once replayed, the writer's reads go to the replica again.
    routed.resume()
    routed.has_replayed(written)
    assert routers.replicas.choose(written) == ALIAS
    assert client.get(f"/memories/{memory.uid}/").status_code == 200


def test_read_your_writes_over_many_writes(routed, org, people):
    """Write then read at once, again and again, with the replica replaying as it goes: the
    writer never misses their write; the replica alone, asked at the same moment, would
    have missed some of them (counted, not asserted: it depends on the machine)."""
    writer, _ = people
    client = logged_in(writer)
    caught_up(routed)
    missed_by_replica = 0
    rounds = 40
    on_replica = routed.connect()
    for n in range(rounds):
        client.post("/scopes/tenant:acme/publish/", {"key": f"k{n}", "text": f"fact {n}"})
        row = on_replica.execute(
            "SELECT 1 FROM memory_core_memory WHERE key = %s", [f"k{n}"]
        ).fetchone()
        missed_by_replica += row is None
        uid = Memory.objects.get(key=f"k{n}", retired_at=None).uid
        assert client.get(f"/memories/{uid}/").status_code == 200, n
    on_replica.close()
    print(f"replica alone missed {missed_by_replica} of {rounds} reads right after a write")


def test_a_failed_login_records_no_position_and_makes_no_session(routed):
    from django.contrib.sessions.models import Session

    refused = Client().post("/login/", {"username": "nobody", "password": "wrong"})
    assert refused.status_code == 200
    assert not Session.objects.exists()


def test_an_agents_remember_is_read_back_from_the_primary(routed, org, client):
    stale_from_here_on(routed)
    created = client.post(
        "/api/v1/memories",
        {"actor": "u1", "key": "lang", "fact": "answers in French"},
        content_type="application/json",
        headers=bearer(org.acme_secret),
    )
    assert created.status_code == 201
    uid = created.json()["id"]
    read = client.get(f"/api/v1/memories/{uid}", {"actor": "u1"}, headers=bearer(org.acme_secret))
    assert read.status_code == 200 and read.json()["text"] == "answers in French"
    turn = client.post(
        "/api/v1/turns",
        {"actor": "u1", "run_id": "r1"},
        content_type="application/json",
        headers=bearer(org.acme_secret),
    )
    assert "answers in French" in turn.json()["block"]


def test_a_lagging_replica_is_skipped_with_a_log_line(routed, org, operator, people, caplog):
    _, reader = people
    stale_from_here_on(routed)
    memory = published(org, operator)
    routed.has_received(routers.primary_lsn())
    client = logged_in(reader)
    assert client.get(f"/memories/{memory.uid}/").status_code == 404  # within the bound
    time.sleep(1.2)  # the replayed position is trusted for STATUS_SECONDS
    with override_settings(REPLICA_MAX_LAG_SECONDS=0.5), caplog.at_level(logging.WARNING):
        assert client.get(f"/memories/{memory.uid}/").status_code == 200
    assert any(
        "replica1 is" in r.getMessage() and "behind" in r.getMessage() for r in caplog.records
    )
    assert routers.replicas.status[ALIAS].lag > 0.5


def test_metrics_report_replica_lag(routed, org, operator):
    stale_from_here_on(routed)
    published(org, operator)
    routed.has_received(routers.primary_lsn())
    time.sleep(0.5)
    text = Client().get("/metrics").content.decode()
    line = next(ln for ln in text.splitlines() if ln.startswith("memory_replica_lag_seconds{"))
    assert 'replica="replica1"' in line and float(line.rsplit(" ", 1)[1]) > 0
    assert 'memory_replica_up{replica="replica1"} 1.0' in text


# Last: these kill the replica.


def test_a_replica_dying_mid_page_is_retried_on_the_primary(
    routed, org, operator, people, monkeypatch, caplog
):
    _, reader = people
    memory = published(org, operator)
    caught_up(routed)
    client = logged_in(reader)
    assert client.get(f"/memories/{memory.uid}/").status_code == 200
    assert routers.replicas.status[ALIAS].up
    monkeypatch.setattr(routers, "STATUS_SECONDS", 600)  # the router still believes it up
    routed.kill()
    with caplog.at_level(logging.WARNING):
        response = client.get(f"/memories/{memory.uid}/")
    assert response.status_code == 200
    assert not routers.replicas.status[ALIAS].up
    assert any("replica1 is unreachable" in r.getMessage() for r in caplog.records)


def test_a_down_replica_is_skipped_and_the_console_never_errors(routed, org, operator, people):
    assert routed.proc.poll() is not None, "the previous test killed it"
    _, reader = people
    memory = published(org, operator)
    client = logged_in(reader)
    for path in (f"/memories/{memory.uid}/", "/ledger/", "/access/", "/memories/", "/"):
        assert client.get(path).status_code == 200, path
    assert routers.replicas.choose(None) is None
    text = Client().get("/metrics").content.decode()
    assert 'memory_replica_up{replica="replica1"} 0.0' in text
    assert settings.DATABASE_REPLICAS == [ALIAS]
