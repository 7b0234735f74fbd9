"""GET /metrics (Prometheus text), request ids in responses, logs and access-log rows, and
the liveness and readiness probes."""

import json
import logging

import pytest
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder
from django.test import override_settings
from prometheus_client.parser import text_string_to_metric_families

from memory_console import request_ids
from memory_console.api import health
from memory_core.ledger import access_log
from memory_core.models import AccessLog
from tests import roles
from tests.helpers import bearer, post_turn

METRICS = "/metrics"


def samples(response) -> dict:
    """{(name, frozenset(labels)): value} of a /metrics answer."""
    found = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            found[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return found


def value(found: dict, name: str, **labels) -> float:
    return found.get((name, frozenset(labels.items())), 0.0)


# --- /metrics: content -----------------------------------------------------------------------


def test_metrics_count_requests_by_route_name_and_turn_stats(org, client):
    before = samples(client.get(METRICS))
    for run in ("m1", "m2"):
        assert post_turn(client, org.acme_secret, {"actor": "u1", "run_id": run}).status_code == 200
    client.get("/api/v1/memories/mem_doesnotexist", {"actor": "u1"}, headers=bearer("nope"))
    response = client.get(METRICS)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=")
    after = samples(response)

    turns = ("memory_http_requests_total", {"route": "api:take_turn", "method": "POST"})
    assert (
        value(after, turns[0], **turns[1], status="2xx")
        - value(before, turns[0], **turns[1], status="2xx")
        == 2
    )
    # The route's name, never the raw path with its id.
    assert not any("mem_doesnotexist" in str(key) for key in after)
    assert value(after, "memory_http_request_seconds_count", route="api:take_turn") >= 2
    assert value(after, "memory_turns_total") - value(before, "memory_turns_total") == 2
    names = {name for name, _ in after}
    assert "memory_turn_memories_total" in names or value(after, "memory_turns_total")
    assert "memory_ledger_events_total" in names
    assert "memory_embedder_errors_total" in names


def test_metrics_turn_stats_add_up_what_turns_reported(org, client, operator):
    from memory_core import writes

    writes.publish(org.root, "units", "report distances in kilometres", principal=operator)
    before = samples(client.get(METRICS))
    turn = post_turn(client, org.acme_secret, {"actor": "u1", "run_id": "stats"}).json()
    after = samples(client.get(METRICS))
    for stat in ("offered", "omitted", "pinned_omitted", "recalled"):
        grew = value(after, "memory_turn_memories_total", stat=stat) - value(
            before, "memory_turn_memories_total", stat=stat
        )
        assert grew == turn["stats"][stat], stat
    assert turn["stats"]["offered"] >= 1


def test_metrics_ledger_events_follow_the_ledger(org, client, operator):
    from memory_core import writes
    from memory_core.models import LedgerEvent

    writes.publish(org.root, "tz", "times are UTC", principal=operator)
    found = samples(client.get(METRICS))
    newest = LedgerEvent.objects.order_by("-id").values_list("id", flat=True).first()
    assert value(found, "memory_ledger_events_total") == newest


def test_metrics_count_embedder_errors():
    before = samples(_loopback_get())
    logging.getLogger("memory_core.recall.providers").warning("embedder unavailable: %s", "refused")
    after = samples(_loopback_get())
    assert (
        value(after, "memory_embedder_errors_total") - value(before, "memory_embedder_errors_total")
        == 1
    )


def _loopback_get():
    from django.test import Client

    return Client().get(METRICS)


@pytest.mark.django_db
def test_metrics_report_the_database_pool(client, monkeypatch):
    from memory_console import metrics

    monkeypatch.setattr(metrics, "_pool_read_at", 0.0)  # read at most once a second
    client.get("/api/v1/health")
    found = samples(client.get(METRICS))
    assert value(found, "memory_db_pool_connections", state="size") >= 1


# --- /metrics: protection --------------------------------------------------------------------


@pytest.mark.django_db
def test_metrics_without_a_token_serve_loopback_only(client):
    assert client.get(METRICS, REMOTE_ADDR="127.0.0.1").status_code == 200
    assert client.get(METRICS, REMOTE_ADDR="::1").status_code == 200
    refused = client.get(METRICS, REMOTE_ADDR="203.0.113.9")
    assert refused.status_code == 403
    assert b"memory_http_requests_total" not in refused.content


@pytest.mark.django_db
@override_settings(METRICS_TOKEN="s3cret-metrics-token")
def test_metrics_with_a_token_need_it_from_everywhere(client):
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic x"}):
        refused = client.get(METRICS, headers=headers, REMOTE_ADDR="127.0.0.1")
        assert refused.status_code == 401, headers
        assert refused["WWW-Authenticate"].startswith("Bearer")
        assert b"memory_" not in refused.content
    ok = client.get(
        METRICS,
        headers={"Authorization": "Bearer s3cret-metrics-token"},
        REMOTE_ADDR="203.0.113.9",
    )
    assert ok.status_code == 200 and b"memory_http_requests_total" in ok.content


@pytest.mark.django_db
def test_metrics_refuse_other_methods(client):
    assert client.post(METRICS).status_code == 405


# --- request ids -----------------------------------------------------------------------------


def test_a_sane_request_id_is_echoed_and_stored_in_the_access_log(org, client):
    response = client.post(
        "/api/v1/turns",
        {"actor": "u1", "run_id": "rid"},
        content_type="application/json",
        headers={**bearer(org.acme_secret), "X-Request-ID": "lb-7f3a.42:x"},
    )
    assert response.status_code == 200
    assert response["X-Request-ID"] == "lb-7f3a.42:x"
    row = AccessLog.objects.filter(action="turn").latest("id")
    assert row.request_id == "lb-7f3a.42:x"


@pytest.mark.parametrize("sent", ["", "has space", "x" * 65, "<script>", "-leading-dash", "é"])
def test_an_insane_request_id_is_replaced(org, client, sent):
    response = client.get(
        "/api/v1/memories",
        {"actor": "u1"},
        headers={**bearer(org.acme_secret), "X-Request-ID": sent},
    )
    assert response.status_code == 200
    given = response["X-Request-ID"]
    assert given != sent and len(given) == 32 and int(given, 16) >= 0
    assert AccessLog.objects.latest("id").request_id == given


def test_a_refused_call_carries_its_request_id_too(org, client):
    response = client.get(
        "/api/v1/memories/mem_missing", {"actor": "u1"}, headers=bearer(org.acme_secret)
    )
    assert response.status_code == 404
    assert AccessLog.objects.latest("id").request_id == response["X-Request-ID"]


def test_every_page_gets_a_request_id(client, db):
    response = client.get("/login/")
    assert len(response["X-Request-ID"]) == 32


def test_rows_written_outside_a_request_carry_none(org, operator):
    from memory_core import writes

    writes.publish(org.root, "tz", "times are UTC", principal=operator)
    assert access_log.REQUEST_ID.get() is None
    assert not AccessLog.objects.exclude(request_id=None).exists()


def test_json_log_lines_carry_the_request_id():
    formatter = request_ids.JsonFormatter()
    record = logging.LogRecord(
        "memory_console", logging.WARNING, __file__, 1, "hi %s", ("x",), None
    )
    token = access_log.REQUEST_ID.set("abc123")
    try:
        request_ids.RequestIdFilter().filter(record)
        line = json.loads(formatter.format(record))
    finally:
        access_log.REQUEST_ID.reset(token)
    assert line["message"] == "hi x" and line["level"] == "WARNING"
    assert line["request_id"] == "abc123" and line["logger"] == "memory_console"
    outside = logging.LogRecord("x", logging.ERROR, __file__, 1, "boom", (), None)
    request_ids.RequestIdFilter().filter(outside)
    assert json.loads(formatter.format(outside))["request_id"] == "-"


# --- health: the fixed contract, liveness, readiness ----------------------------------------


@pytest.mark.django_db
def test_health_keeps_its_contract(client):
    response = client.get("/api/v1/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok"}


def test_liveness_needs_no_database(client):
    response = client.get("/api/v1/health/live")  # no django_db: any query would fail
    assert response.status_code == 200 and response.json() == {"status": "ok"}


@pytest.mark.django_db
def test_ready_when_migrated(client):
    response = client.get("/api/v1/health/ready")
    assert response.status_code == 200
    assert response.json() == {"status": "ready", "database": "ok", "migrations": "applied"}


@pytest.mark.django_db
def test_not_ready_while_a_migration_is_pending(client, monkeypatch):
    monkeypatch.setattr(health, "_applied", False)
    with roles.as_owner():
        recorded = MigrationRecorder(connection).migration_qs.filter(app="memory_core")
        recorded.filter(pk=recorded.order_by("-name").first().pk).delete()  # the newest
        response = client.get("/api/v1/health/ready")
        at_root = client.get("/health/ready")
    pending = {"status": "not ready", "database": "ok", "migrations": "pending"}
    assert response.status_code == 503 and response.json() == pending
    assert at_root.status_code == 503 and at_root.json() == pending


@pytest.mark.django_db
def test_the_probes_answer_at_the_root_too(client):
    live = client.get("/health/live")
    assert live.status_code == 200 and live.json() == {"status": "ok"}
    assert live["Cache-Control"] == "no-store"
    ready = client.get("/health/ready")
    assert ready.status_code == 200
    assert ready.json() == {"status": "ready", "database": "ok", "migrations": "applied"}
    assert client.post("/health/ready").status_code == 405
    assert client.post("/api/v1/health/live").status_code == 405


# --- serve's metric files ----------------------------------------------------------------------


def test_serve_points_the_workers_at_a_metrics_directory_of_its_own(
    tmp_path, monkeypatch, settings
):
    from memory_console.management.commands.serve import prepare_metrics_dir

    # Set, then removed: monkeypatch then removes what prepare_metrics_dir sets, afterwards.
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", "placeholder")
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR")
    settings.METRICS_DIR = tmp_path / "metrics"
    prepare_metrics_dir(8011)
    import os

    assert os.environ["PROMETHEUS_MULTIPROC_DIR"] == str(tmp_path / "metrics" / "8011")
    assert (tmp_path / "metrics" / "8011").is_dir()


def test_serve_empties_only_metric_files_of_an_earlier_run(tmp_path, monkeypatch):
    from memory_console.management.commands.serve import prepare_metrics_dir

    (tmp_path / "counter_123.db").write_bytes(b"x")
    (tmp_path / "notes.txt").write_text("kept")
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    prepare_metrics_dir(8000)
    assert not (tmp_path / "counter_123.db").exists()
    assert (tmp_path / "notes.txt").read_text() == "kept"
