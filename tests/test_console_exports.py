"""Exports with proofs: /exports/ledger.*, /exports/access.*, /exports/attribution.jsonl —
the page filters, grants, streaming, manifests checked against the data, access-logged,
and no forgotten text."""

import csv
import io
import json
from urllib.parse import urlencode

import pytest
from django.http import StreamingHttpResponse

from memory_core import forgetting, transcripts, turns, writes
from memory_core.ledger import exports, ledger
from memory_core.models import AccessLog, LedgerEvent
from tests.helpers import login

ACME_TOKENS = {"tenant:acme", "team:acme/ops", "actor:acme/u1", "actor:acme/u2"}


@pytest.fixture
def events(users, org):
    writes.publish(org.acme, "fiscal-year", "starts in October", principal=users.p_owner)
    writes.publish(org.ops, "oncall", "rotates on Mondays", principal=users.p_owner)
    writes.remember(org.u1, "tz", "works in CET", principal=org.acme_agent)
    writes.publish(org.globex, "secret-plan", "globex only", principal=users.p_outsider)


def _body(response) -> bytes:
    assert isinstance(response, StreamingHttpResponse)
    return b"".join(response.streaming_content)


def _jsonl(data: bytes):
    lines = [json.loads(line) for line in data.decode().splitlines()]
    return lines[:-1], lines[-1]["manifest"]


# --- the ledger ------------------------------------------------------------------------------


def test_ledger_jsonl_holds_the_readable_events_and_ends_with_a_checkable_manifest(
    client, users, events
):
    response = login(client, users.auditor).get("/exports/ledger.jsonl")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/x-ndjson")
    data = _body(response)
    rows, manifest = _jsonl(data)
    expected = list(LedgerEvent.objects.filter(scope__in=ACME_TOKENS).order_by("id"))
    assert [r["id"] for r in rows] == [e.id for e in expected]
    assert exports.check(data) == manifest
    assert manifest["rows"] == len(expected) and manifest["export"] == "ledger"
    # Every exported row re-hashes to its own hash with the project's canonical form.
    for row in rows:
        event = LedgerEvent(**{k: v for k, v in row.items() if k not in ("id", "hash")})
        event.created_at = LedgerEvent.objects.get(id=row["id"]).created_at
        assert ledger.event_hash(event) == row["hash"]
    # The covering heads: per stream, the last exported event and the head at `upto`.
    heads = {h["stream"]: h for h in manifest["streams"]}
    assert set(heads) == {"tenant:acme"}
    acme_last = [r for r in rows if r["stream"] == "tenant:acme"][-1]
    head = LedgerEvent.objects.filter(stream="tenant:acme").order_by("-seq").first()
    assert heads["tenant:acme"]["last_hash"] == acme_last["hash"]
    assert (heads["tenant:acme"]["head_seq"], heads["tenant:acme"]["head_hash"]) == (
        head.seq,
        head.hash,
    )


def test_ledger_csv_matches_its_manifest_at_the_manifest_address(client, users, events):
    login(client, users.su)
    response = client.get("/exports/ledger.csv?kind=memory.published")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    data = _body(response)
    manifest_url = response["X-Export-Manifest"]
    assert manifest_url.startswith("/exports/ledger.csv/manifest?")
    assert f"<{manifest_url}>" in response["Link"]
    manifest = client.get(manifest_url).json()
    assert exports.check(data, manifest) == manifest
    rows = list(csv.DictReader(io.StringIO(data.decode())))
    assert manifest["columns"] == exports.LEDGER_COLUMNS == list(rows[0])
    published = LedgerEvent.objects.filter(kind="memory.published").order_by("id")
    assert [int(r["id"]) for r in rows] == [e.id for e in published]
    assert manifest["filters"]["kind"] == "memory.published"
    assert json.loads(rows[0]["payload"]) == published[0].payload


def test_a_manifest_is_pinned_against_events_appended_later(client, users, org, events):
    login(client, users.su)
    response = client.get("/exports/ledger.jsonl?window=24h")
    data = _body(response)
    writes.publish(org.acme, "later", "written after the export", principal=users.p_su)
    manifest = client.get(response["X-Export-Manifest"]).json()
    assert exports.check(data)["sha256"] == manifest["sha256"]
    assert manifest["upto"] < LedgerEvent.objects.order_by("-id").first().id


def test_ledger_filters_by_stream_and_sequence_range(client, users, events):
    login(client, users.su)
    data = _body(client.get("/exports/ledger.jsonl?stream=tenant:acme&seq_from=2&seq_to=3"))
    rows, manifest = _jsonl(data)
    assert [(r["stream"], r["seq"]) for r in rows] == [("tenant:acme", 2), ("tenant:acme", 3)]
    assert manifest["filters"]["seq_from"] == 2 and manifest["filters"]["stream"] == "tenant:acme"


def test_a_malformed_sequence_is_422_and_exports_nothing(client, users, events):
    before = AccessLog.objects.filter(action="export.ledger").count()
    response = login(client, users.su).get("/exports/ledger.csv?seq_from=two")
    assert response.status_code == 422
    assert AccessLog.objects.filter(action="export.ledger").count() == before


def test_an_auditor_never_gets_another_tenants_events(client, users, events):
    for fmt in ("csv", "jsonl"):
        data = _body(login(client, users.auditor).get(f"/exports/ledger.{fmt}?scope=tenant:globex"))
        assert b"globex" not in data.split(b'{"manifest"')[0]
    rows, _ = _jsonl(_body(client.get("/exports/ledger.jsonl")))
    assert {r["scope"] for r in rows} <= ACME_TOKENS


def test_exports_need_a_login(client, users):
    for path in (
        "/exports/ledger.csv",
        "/exports/ledger.jsonl",
        "/exports/access.csv",
        "/exports/access.jsonl",
        "/exports/ledger.csv/manifest",
        "/exports/attribution.jsonl?run=run-2",
    ):
        response = client.get(path)
        assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_exports_are_get_only(client, users):
    response = login(client, users.su).post("/exports/ledger.csv")
    assert response.status_code == 405


def test_an_export_is_access_logged_with_its_count_and_hash(client, users, events):
    data = _body(login(client, users.auditor).get("/exports/ledger.jsonl"))
    _, manifest = _jsonl(data)
    row = AccessLog.objects.get(action="export.ledger")
    assert row.principal == "user:auditor" and row.channel == "console" and row.outcome == 200
    assert row.count == manifest["rows"]
    assert row.detail["sha256"] == manifest["sha256"] and row.detail["complete"] is True


# --- the access log --------------------------------------------------------------------------


def test_access_export_uses_the_page_filters_and_grants(client, users, org, events):
    writes.remember(org.x9, "tz", "works in PST", principal=org.globex_agent)
    from memory_core.ledger import access_log

    access_log.record(org.acme_agent, "turn", 404, actor_ref="acme/u1")
    access_log.record(org.globex_agent, "turn", 404, actor_ref="globex/x9")
    login(client, users.auditor)
    response = client.get("/exports/access.csv?refused=on")
    data = _body(response)
    rows = list(csv.DictReader(io.StringIO(data.decode())))
    assert rows and all(int(r["outcome"]) >= 400 for r in rows)
    assert all(r["actor_ref"] != "globex/x9" for r in rows)
    manifest = client.get(response["X-Export-Manifest"]).json()
    exports.check(data, manifest)
    assert manifest["filters"]["refused"] is True
    assert {h["stream"] for h in manifest["ledger_heads"]} == {"tenant:acme"}
    jsonl_rows, jsonl_manifest = _jsonl(_body(client.get("/exports/access.jsonl?refused=on")))
    assert [r["id"] for r in jsonl_rows] == [int(r["id"]) for r in rows]
    assert jsonl_manifest["rows"] == len(rows)


# --- attribution -----------------------------------------------------------------------------


@pytest.fixture
def taught(org):
    agent = org.acme_agent
    transcripts.record_message(
        org.u1, "t-1", "user", "I moved to Berlin, hours CET", principal=agent, run_id="run-1"
    )
    memory = writes.remember(
        org.u1, "tz", "works in CET", principal=agent, run_id="run-1", thread_id="t-1"
    ).memory
    turns.resolve_turn(org.u1, "run-2", principal=agent, thread_id="t-1", query="time")
    return memory


def test_attribution_bundle_for_a_run(client, users, taught):
    response = login(client, users.auditor).get("/exports/attribution.jsonl?run=run-2")
    assert response.status_code == 200
    data = _body(response)
    records, manifest = _jsonl(data)
    exports.check(data)
    by_type = {}
    for record in records:
        by_type.setdefault(record["type"], []).append(record)
    assert [line["memory"] for line in by_type["line"]] == [taught.uid]
    assert by_type["memory"][0]["id"] == taught.uid and by_type["memory"][0]["carried"]
    assert by_type["memory"][0]["text"] == "works in CET"
    assert any(e["payload"].get("memory") == taught.uid for e in by_type["event"])
    assert [m["text"] for m in by_type["message"]] == ["I moved to Berlin, hours CET"]
    assert by_type["message"][0]["originating"] is True
    assert manifest["counts"]["line"] == 1 and manifest["truncated"] is False
    row = AccessLog.objects.get(action="export.attribution")
    assert taught.uid in row.memory_ids and row.count == len(records)


def test_attribution_bundle_by_line_matches_the_page(client, users, taught):
    query = urlencode({"line": "- [actor:acme/u1] tz: works in CET"})
    records, _ = _jsonl(_body(login(client, users.su).get(f"/exports/attribution.jsonl?{query}")))
    assert [r["memory"] for r in records if r["type"] == "line"] == [taught.uid]


def test_attribution_bundle_needs_a_line_or_a_run(client, users, taught):
    response = login(client, users.auditor).get("/exports/attribution.jsonl")
    assert response.status_code == 422
    assert not AccessLog.objects.filter(action="export.attribution").exists()


def test_attribution_bundle_outside_the_grants_is_empty(client, users, taught):
    records, manifest = _jsonl(
        _body(login(client, users.outsider).get("/exports/attribution.jsonl?run=run-2"))
    )
    assert records == [] and manifest["rows"] == 0


def test_forgotten_text_never_appears_in_any_export(client, users, org, taught):
    forgetting.forget(taught, principal=users.p_su)
    login(client, users.su)
    for path in (
        "/exports/attribution.jsonl?run=run-2",
        "/exports/ledger.jsonl",
        "/exports/ledger.csv",
        "/exports/access.jsonl",
        "/exports/access.csv",
    ):
        data = _body(client.get(path))
        assert b"works in CET" not in data, path
    records, _ = _jsonl(_body(client.get("/exports/attribution.jsonl?run=run-2")))
    gone = [r for r in records if r["type"] == "forgotten"]
    assert gone and gone[0]["memory"] == taught.uid and gone[0]["by"] == "user:root"
    assert [r["text"] for r in records if r["type"] == "line"] == ["[forgotten]"]


# --- the operators' commands -----------------------------------------------------------------


def test_export_ledger_command_writes_the_file_and_a_manifest_that_checks(
    users, org, events, tmp_path, capsys
):
    from django.core.management import call_command

    out = tmp_path / "ledger.csv"
    call_command("export_ledger", str(out), stream="tenant:acme", seq_from=2)
    manifest = json.loads((tmp_path / "ledger.csv.manifest.json").read_text())
    exports.check(out.read_bytes(), manifest)
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    expected = LedgerEvent.objects.filter(stream="tenant:acme", seq__gte=2).order_by("id")
    assert [int(r["id"]) for r in rows] == [e.id for e in expected]
    head = manifest["streams"][0]
    assert head["stream"] == "tenant:acme" and head["last_hash"] == expected.last().hash
    assert manifest["filters"]["seq_from"] == 2 and manifest["by"] == "cli:export_ledger"
    logged = AccessLog.objects.get(action="export.ledger")
    assert logged.channel == "cli" and logged.count == len(rows)
    assert str(out) in capsys.readouterr().out


def test_export_access_command_writes_jsonl_with_a_trailing_manifest(users, org, events, tmp_path):
    from django.core.management import call_command

    from memory_core.ledger import access_log

    access_log.record(org.acme_agent, "turn", 404, actor_ref="acme/u1")
    out = tmp_path / "access.jsonl"
    call_command("export_access", str(out), refused=True)
    data = out.read_bytes()
    trailing = exports.check(data)
    beside = json.loads((tmp_path / "access.jsonl.manifest.json").read_text())
    assert trailing["sha256"] == beside["sha256"] and beside["rows"] == 1
    assert beside["ledger_heads"]
    rows, _ = _jsonl(data)
    assert rows[0]["outcome"] == 404 and rows[0]["actor_ref"] == "acme/u1"


def test_export_command_refuses_an_unknown_format(users, tmp_path):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="format"):
        call_command("export_ledger", str(tmp_path / "ledger.xml"))
    assert not (tmp_path / "ledger.xml").exists()


# --- the queries behind an export ------------------------------------------------------------


def test_ledger_export_batches_and_head_probes_walk_indexes(client, users, events):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.helpers import explain
    from tests.roles import as_owner

    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO memory_core_ledgerevent
                (stream, seq, kind, scope, principal, actor_ref, payload, created_at,
                 prev_hash, hash)
            SELECT 'tenant:bulk', g, 'bulk.kind', 'tenant:bulk', 'key:bulk', NULL, '{}'::jsonb,
                   now(), md5('p' || g) || md5('q' || g), md5('h' || g) || md5('i' || g)
            FROM generate_series(1, 3000) AS g
            """
        )
        with as_owner():
            cursor.execute("ANALYZE memory_core_ledgerevent")
    with CaptureQueriesContext(connection) as queries:
        data = _body(login(client, users.su).get("/exports/ledger.jsonl?stream=tenant:bulk"))
    _, manifest = _jsonl(data)
    assert manifest["rows"] == 3000
    for q in queries:
        print("Q", q["sql"][:300])
    batches = [q["sql"] for q in queries if "LIMIT 2000" in q["sql"]]
    assert len(batches) == 3  # 2000 + 1000 + the empty one that ends it
    head_probe = next(q["sql"] for q in queries if "ORDER BY 1 DESC LIMIT 1" in q["sql"])
    for sql in (batches[1], head_probe):
        plan = explain(sql)
        print(plan)
        assert "Index" in plan and "Seq Scan" not in plan


# --- every parameter of every export is checked ------------------------------------------

EXPORTS = [
    "/exports/ledger.csv",
    "/exports/ledger.jsonl",
    "/exports/ledger.csv/manifest",
    "/exports/access.csv",
    "/exports/access.jsonl",
    "/exports/access.jsonl/manifest",
    "/exports/attribution.jsonl?run=run-2",
]


def _refused(client, address: str, words: str) -> None:
    response = client.get(address)
    assert response.status_code == 422, address
    assert not response.streaming
    assert words in response.json()["detail"], (address, response.json())
    assert not AccessLog.objects.filter(action__startswith="export.").exists()


@pytest.mark.parametrize("export", EXPORTS)
def test_a_parameter_the_export_does_not_read_is_422(client, users, taught, export):
    joiner = "&" if "?" in export else "?"
    login(client, users.su)
    _refused(client, f"{export}{joiner}knd=memory.published", "unknown parameter 'knd'")
    _refused(client, f"{export}{joiner}before=5", "unknown parameter 'before'")


@pytest.mark.parametrize("export", EXPORTS)
def test_a_parameter_given_twice_is_422(client, users, taught, export):
    name = "run" if "attribution" in export else "since"
    value = "run-2" if name == "run" else "2020-01-01T00:00"
    address = f"{export.split('?')[0]}?{name}={value}&{name}={value}"
    _refused(login(client, users.su), address, f"parameter '{name}' is given 2 times")


@pytest.mark.parametrize(
    "query, words",
    [
        ("kind=memory.publish", "did you mean memory.published?"),
        ("kind=nothing.like.it", "no event type the ledger records"),
        ("scope=not%20a%20scope", "not a scope token"),
        ("principal=" + "p" * 201, "principal"),
        ("stream=not%20a%20stream", "is not a stream"),
        ("window=24h&since=2020-01-01T00:00", "either window or since"),
        ("seq_from=-1", "must not be negative"),
        ("since=yesterday", "since"),
    ],
)
def test_a_malformed_ledger_export_value_is_422(client, users, events, query, words):
    for export in ("/exports/ledger.csv", "/exports/ledger.jsonl/manifest"):
        _refused(login(client, users.su), f"{export}?{query}", words)


@pytest.mark.parametrize(
    "query, words",
    [
        ("refused=maybe", "refused"),
        ("refused=on&refused=on", "given 2 times"),
        ("outcome=401", "outcome"),
        ("outcome=abc", "outcome"),
        ("actor=not%20a%20ref", "not an actor ref"),
        ("action=Not%20An%20Action", "not an action"),
        ("seq_from=abc", "unknown parameter 'seq_from'"),
        ("kind=memory.published", "unknown parameter 'kind'"),
        ("window=2h", "window"),
    ],
)
def test_a_malformed_access_export_value_is_422(client, users, events, query, words):
    _refused(login(client, users.su), f"/exports/access.csv?{query}", words)


@pytest.mark.parametrize(
    "query, words",
    [
        ("run=" + "r" * 129, "run is longer than 128 characters"),
        ("line=" + "x" * 2001, "line is longer than 2000 characters"),
        ("line=-", "not a prompt line"),
        ("run=run-2&actor=not%20a%20ref", "not an actor ref"),
        ("run=run%E2%80%A82", "run contains a control"),
        ("", "give a prompt line"),
    ],
)
def test_a_malformed_attribution_query_is_422(client, users, taught, query, words):
    _refused(login(client, users.su), f"/exports/attribution.jsonl?{query}", words)


def test_refused_reads_on_and_off_as_a_checkbox_does(client, users, org, events):
    from memory_core.ledger import access_log

    access_log.record(org.acme_agent, "turn", 404, actor_ref="acme/u1")
    login(client, users.su)
    on = _jsonl(_body(client.get("/exports/access.jsonl?refused=on")))
    off = _jsonl(_body(client.get("/exports/access.jsonl?refused=off")))
    assert on[1]["filters"]["refused"] is True and off[1]["filters"]["refused"] is False
    assert on[0] and all(row["outcome"] >= 400 for row in on[0])
    assert len(off[0]) > len(on[0])
