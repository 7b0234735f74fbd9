"""The management commands scripts and operators depend on (docs/operators/commands.md)."""

import gc
import io
import json

import pgtrigger
import pytest
from django.contrib.auth import authenticate, get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.db.models import Count

from memory_console.demo import load_demo
from memory_core import curation, transcripts, writes
from memory_core.accounts import keys
from memory_core.management.progress import Progress
from memory_core.models import (
    Actor,
    Author,
    Digest,
    LedgerEvent,
    Memory,
    Message,
    RetiredReason,
    Scope,
    ScopeGrant,
    Thread,
)
from tests.roles import as_owner


@pytest.fixture(autouse=True)
def fast_passwords(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def run(*args, **options):
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err, **options)
    return out.getvalue(), err.getvalue()


def write_lines(path, lines):
    path.write_text("".join(f"{json.dumps(x) if isinstance(x, dict) else x}\n" for x in lines))
    return str(path)


def read_lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


# --- progress ------------------------------------------------------------------------------


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_prints_at_most_about_twenty_lines_off_a_terminal(monkeypatch):
    monkeypatch.setattr("memory_core.management.progress.PLAIN_SECONDS", 0)
    stream = io.StringIO()
    with Progress(1000, "import", stream) as progress:
        for _ in range(1000):
            progress.advance()
    lines = stream.getvalue().splitlines()
    assert 15 <= len(lines) <= 21
    assert lines[-1] == "import: 1000/1000 (100%)"
    assert "\r" not in stream.getvalue()


def test_progress_off_a_terminal_prints_only_the_last_line_of_a_quick_job():
    stream = io.StringIO()
    with Progress(30, "export", stream) as progress:
        for _ in range(30):
            progress.advance()
    assert stream.getvalue() == "export: 30/30 (100%)\n"


def test_progress_redraws_one_line_on_a_terminal():
    stream = FakeTerminal()
    with Progress(4, "export", stream) as progress:
        for _ in range(4):
            progress(1)
    text = stream.getvalue()
    assert text.count("\n") == 1 and text.endswith("\n")
    assert "\rexport [" in text and "4/4 100%" in text


def test_progress_when_quiet_writes_nothing():
    stream = io.StringIO()
    with Progress(10, "x", stream, quiet=True) as progress:
        progress.advance(10)
    assert stream.getvalue() == ""


# --- create_api_key and grant ---------------------------------------------------------------


def test_create_api_key_prints_a_working_secret_alone_on_the_last_line(org):
    out, _ = run("create_api_key", "--name", "billing host", "--reach", "tenant:acme")
    lines = out.splitlines()
    secret = lines[-1]
    assert len(lines) >= 2 and secret.startswith("mc_") and " " not in secret
    key = keys.authenticate(secret)
    assert key is not None and key.name == "billing host" and key.reach == org.acme
    assert secret not in key.secret_hash
    assert LedgerEvent.objects.filter(kind="api_key.created", payload__api_key=key.uid).exists()


def test_create_api_key_with_unknown_reach_is_a_clear_error(db):
    with pytest.raises(CommandError, match="no scope 'tenant:nowhere'"):
        run("create_api_key", "--name", "x", "--reach", "tenant:nowhere")


def test_grant_creates_the_scope_grant(users, org):
    get_user_model().objects.create_user("carol", "c@example.com", "pw-carol-123")
    out, _ = run("grant", "carol", "tenant:globex", "--role", "auditor")
    assert "carol is now auditor of tenant:globex" in out
    row = ScopeGrant.objects.get(user__username="carol")
    assert row.scope == org.globex and row.role == "auditor"
    run("grant", "carol", "tenant:globex", "--role", "admin")
    assert ScopeGrant.objects.get(user__username="carol").role == "admin"


def test_grant_refuses_unknown_user_and_scope(org):
    with pytest.raises(CommandError, match="no user.*create the user first.*createsuperuser"):
        run("grant", "nobody", "tenant:acme", "--role", "admin")
    with pytest.raises(CommandError, match="no scope"):
        run("grant", "nobody", "tenant:nowhere", "--role", "admin")


# --- import and export ----------------------------------------------------------------------


def test_import_publishes_creates_scopes_and_ledgers_each_line(org, tmp_path):
    path = write_lines(
        tmp_path / "in.jsonl",
        [
            {"scope": "global", "key": "units", "text": "report distances in kilometres"},
            {"scope": "tenant:acme", "key": "currency", "text": "quote in dollars", "pinned": True},
            {"scope": "team:new", "key": "standup", "text": "stand-up is at 09:30"},
            {
                "scope": "team:fresh/deep",
                "key": "owner",
                "text": "the deep team owns billing",
                "parent": "tenant:fresh",
                "tags": ["billing"],
                "user": "dana",
            },
        ],
    )
    before = LedgerEvent.objects.filter(kind="memory.published").count()
    out, _ = run("import_memories", path)
    assert "Imported 4 memories" in out and "created 3 scope(s)" in out
    assert Scope.objects.get(token="team:new").parent.token == "global"
    assert Scope.objects.get(token="tenant:fresh").parent.token == "global"
    assert Scope.objects.get(token="team:fresh/deep").parent.token == "tenant:fresh"
    deep = Memory.objects.live().get(scope__token="team:fresh/deep")
    assert deep.origin_user == "dana" and deep.tags == ["billing"] and deep.author == Author.HUMAN
    assert Memory.objects.live().get(scope__token="global").origin_user == "cli:import"
    assert Memory.objects.live().get(scope=org.acme, key="currency").pinned
    assert LedgerEvent.objects.filter(kind="memory.published").count() == before + 4
    assert LedgerEvent.objects.filter(principal="cli:dana").exists()


def test_import_of_an_existing_user_names_that_user(users, tmp_path):
    path = write_lines(
        tmp_path / "in.jsonl",
        [{"scope": "tenant:acme", "key": "tone", "text": "be brief", "user": "owner"}],
    )
    run("import_memories", path)
    assert Memory.objects.live().get(key="tone").origin_user == "owner"


def test_reimport_of_the_same_scope_and_key_supersedes(org, tmp_path):
    line = {"scope": "tenant:acme", "key": "currency", "text": "quote in dollars"}
    path = write_lines(tmp_path / "a.jsonl", [line])
    run("import_memories", path)
    first = Memory.objects.live().get(scope=org.acme, key="currency")
    path = write_lines(tmp_path / "b.jsonl", [{**line, "text": "quote in euros"}])
    out, _ = run("import_memories", path)
    assert "1 superseding a live one" in out
    live = Memory.objects.live().get(scope=org.acme, key="currency")
    first.refresh_from_db()
    assert live.text == "quote in euros" and live.supersedes == first
    assert first.retired_reason == RetiredReason.SUPERSEDED and live.lineage == first.lineage


def test_import_reports_bad_lines_by_number_and_exits_non_zero(org, tmp_path):
    path = write_lines(
        tmp_path / "in.jsonl",
        [
            {"scope": "tenant:acme", "key": "good", "text": "this one is fine"},
            "{not json",
            {"scope": "tenant:acme", "key": "x", "text": "t", "colour": "red"},
            {"scope": "tenant:acme", "key": "Bad Key", "text": "t"},
            "",
            {"scope": "tenant:acme", "key": "two", "text": "line\u2028break"},
            {"scope": "not a scope", "key": "k", "text": "t"},
            {"scope": "actor:acme/u1", "key": "k", "text": "agents write these"},
            {"scope": "tenant:acme", "key": "also-good", "text": "imported despite the rest"},
            [1, 2],
        ],
    )
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(CommandError, match="7 line"):
        call_command("import_memories", path, stdout=out, stderr=err)
    errors = err.getvalue()
    assert "line 2: invalid JSON" in errors
    assert "line 3: unknown field(s): colour" in errors
    assert "line 4: key must" in errors
    assert "line 6: fact must be a single line" in errors
    assert "line 7: scope 'not a scope' is not a scope token" in errors
    assert "line 8: actor scopes are not imported" in errors
    assert "line 10: each line must be a JSON object" in errors
    assert "line 5" not in errors  # a blank line is not an error
    assert "Imported 2 memories" in out.getvalue()
    assert set(Memory.objects.live().filter(scope=org.acme).values_list("key", flat=True)) == {
        "good",
        "also-good",
    }


def test_export_then_import_round_trips(org, users, tmp_path, operator):
    writes.publish(org.ops, "units", "report distances in miles", principal=users.p_owner)
    writes.publish(org.root, "fiscal-year", "the fiscal year starts in October", principal=operator)
    pinned = writes.publish(
        org.acme, "escalation", "page the on-call", principal=operator, pinned=True, tags=["ops"]
    )
    writes.correct(pinned, "page the on-call engineer", principal=operator)
    writes.remember(
        org.u1, "fiscal-year", "they report on the calendar year", principal=org.acme_agent
    )

    path = tmp_path / "out.jsonl"
    out, _ = run("export_memories", str(path))
    assert "Exported 4 live memories (3 by people, 1 by agents)" in out
    lines = read_lines(path)
    assert [(x["scope"], x["key"]) for x in lines] == sorted((x["scope"], x["key"]) for x in lines)
    by_key = {(x["scope"], x["key"]): x for x in lines}
    assert by_key[("team:acme/ops", "units")] == {
        "scope": "team:acme/ops",
        "key": "units",
        "text": "report distances in miles",
        "pinned": False,
        "tags": [],
        "user": "owner",
        "parent": "tenant:acme",
    }
    assert by_key[("tenant:acme", "escalation")]["text"] == "page the on-call engineer"
    assert by_key[("tenant:acme", "escalation")]["pinned"] is True
    agent = by_key[("actor:acme/u1", "fiscal-year")]
    assert agent["author"] == "agent" and "user" not in agent

    out, err = run("import_memories", str(path))
    assert "Imported 3 memories (3 superseding a live one)" in out
    assert "skipped 1 agent line(s)" in out and "skipped: an agent's memory" in err
    again = tmp_path / "again.jsonl"
    run("export_memories", str(again))
    assert read_lines(again) == lines


def test_export_of_one_scope_to_stdout(org, operator):
    writes.publish(org.acme, "a", "fact a", principal=operator)
    writes.publish(org.globex, "b", "fact b", principal=operator)
    retired = writes.publish(org.acme, "c", "fact c", principal=operator)
    curation.invalidate(retired, "wrong", principal=operator)
    out, err = run("export_memories", "-", "--scope", "tenant:acme")
    assert [json.loads(x)["key"] for x in out.splitlines()] == ["a"]
    assert "Exported 1 live memory" in err
    with pytest.raises(CommandError, match="no scope"):
        run("export_memories", "-", "--scope", "tenant:nowhere")


# --- verify_ledger --------------------------------------------------------------------------


def test_verify_ledger_ok_on_a_clean_ledger(org, operator):
    writes.publish(org.acme, "units", "report distances in kilometres", principal=operator)
    out, _ = run("verify_ledger")
    assert out.strip() == f"ok: {LedgerEvent.objects.count()} events"


def test_verify_ledger_exits_1_naming_the_tampered_event(org, operator):
    writes.publish(org.acme, "units", "report distances in kilometres", principal=operator)
    event = LedgerEvent.objects.filter(kind="memory.published").latest("id")
    # Only the owner can even try (the server's role may not UPDATE the ledger at all).
    with as_owner(), pgtrigger.ignore("memory_core.LedgerEvent:ledger_append_only"):
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE memory_core_ledgerevent SET payload = %s WHERE id = %s",
                [json.dumps({"memory": "mem_forged", "chars": 3}), event.pk],
            )
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(SystemExit) as exit_info:
        call_command("verify_ledger", stdout=out, stderr=err)
    assert exit_info.value.code == 1
    message = err.getvalue()
    assert f"event {event.pk}" in message
    assert f"stream {event.stream}, seq {event.seq}, kind memory.published" in message
    assert "hash does not match" in message
    assert "ok:" not in out.getvalue()


# --- prune_history --------------------------------------------------------------------------


def test_prune_history_keeps_the_newest_and_never_touches_memories(org):
    agent = org.acme_agent
    for n in range(5):
        transcripts.record_message(org.u1, "long", "user", f"message {n}", principal=agent)
    transcripts.record_message(org.u2, "short", "user", "only one", principal=agent)
    learned = writes.remember(
        org.u1, "tea", "drinks green tea", principal=agent, thread_id="long", run_id="r1"
    ).memory
    out, _ = run("prune_history", "--max-messages", "2")
    assert "Pruned 3 message(s) and removed 0 empty thread(s)" in out
    kept = Message.objects.filter(thread__ref="long").values_list("text", flat=True)
    assert sorted(kept) == ["message 3", "message 4"]
    assert Message.objects.filter(thread__ref="short").count() == 1

    out, _ = run("prune_history", "--max-messages", "0")
    assert "removed 2 empty thread(s)" in out
    assert not Thread.objects.exists() and not Message.objects.exists()
    assert Memory.objects.live().get(pk=learned.pk).origin_thread == "long"


def test_prune_history_refuses_a_negative_count(db):
    with pytest.raises(CommandError):
        run("prune_history", "--max-messages", "-1")


# --- demo -----------------------------------------------------------------------------------


def test_demo_builds_the_organisation_once(db):
    stream = io.StringIO()
    result = load_demo(stdout=stream)
    assert result["loaded"] and "demo: " in stream.getvalue()
    logins = {x["username"]: x for x in result["logins"]}
    admin = get_user_model().objects.get(username="admin")
    assert admin.is_superuser and admin.check_password(logins["admin"]["password"])
    assert logins["admin"]["password"] not in admin.password
    assert ScopeGrant.objects.filter(
        user__username="alice", scope__token="tenant:acme", role="admin"
    ).exists()
    assert ScopeGrant.objects.filter(
        user__username="gus", scope__token="tenant:globex", role="auditor"
    ).exists()
    assert all(keys.authenticate(k["secret"]) for k in result["api_keys"])

    tenants = Scope.objects.filter(token__startswith="tenant:")
    assert tenants.count() >= 2
    assert Scope.objects.filter(token__startswith="team:", parent__in=tenants).count() >= 4
    assert Actor.objects.count() >= 12
    live = Memory.objects.live()
    assert live.filter(pinned=True).exists()
    assert live.get(scope__token="global", key="units").text == "report distances in kilometres"
    assert live.get(scope__token="global", key="fiscal-year").author == Author.HUMAN
    worked = live.get(scope__token="actor:acme/u1", key="fiscal-year")
    assert worked.author == Author.AGENT and worked.text == "they report on the calendar year"
    assert Memory.objects.filter(promoted_from__isnull=False).count() >= 2
    assert Memory.objects.filter(retired_reason=RetiredReason.PROMOTED).exists()
    assert Memory.objects.filter(retired_reason=RetiredReason.INVALIDATED).exists()
    lineages = Memory.objects.values("lineage").annotate(n=Count("id"))
    assert max(row["n"] for row in lineages) >= 3

    # A remember's run is a run of the thread it was learned in, with its digest.
    assert {"user", "assistant", "tool"} <= set(Message.objects.values_list("role", flat=True))
    assert Message.objects.filter(
        thread__ref=worked.origin_thread, run_id=worked.origin_run, role="tool"
    ).exists()
    assert Digest.objects.filter(actor=worked.origin_actor, run_id=worked.origin_run).exists()
    assert Digest.objects.filter(query__isnull=False).exists()
    assert Digest.objects.filter(query__isnull=True).exists()
    assert Digest.objects.exclude(block="").exists()

    counts = (Memory.objects.count(), Message.objects.count(), Digest.objects.count())
    assert load_demo() == {"loaded": False}
    # A second load changes no user: the first password still works (tests/test_demo_rerun.py).
    assert authenticate(username="admin", password=logins["admin"]["password"]) is not None
    assert (Memory.objects.count(), Message.objects.count(), Digest.objects.count()) == counts
    assert get_user_model().objects.filter(username="admin").count() == 1
    out, _ = run("verify_ledger")
    assert out.startswith("ok: ")


# --- serve (no server is started) -----------------------------------------------------------


def test_serve_parses_its_options():
    from memory_console.management.commands.serve import Command

    parser = Command().create_parser("manage.py", "serve")
    defaults = parser.parse_args([])
    assert (defaults.demo, defaults.host, defaults.port, defaults.workers) == (
        False,
        "127.0.0.1",
        8000,
        2,
    )
    given = parser.parse_args(["--demo", "--port", "8011", "--host", "0.0.0.0", "--workers", "3"])
    assert (given.demo, given.host, given.port, given.workers) == (True, "0.0.0.0", 8011, 3)
    for bad in (["--port", "0"], ["--port", "x"], ["--workers", "0"]):
        with pytest.raises(CommandError):
            parser.parse_args(bad)


@pytest.mark.filterwarnings("ignore:No directory at:UserWarning")  # STATIC_ROOT: serve collects
def test_serve_application_loads_the_wsgi_app():
    from memory_console.management.commands.serve import ConsoleApplication, gunicorn_options
    from memory_console.wsgi import application

    app = ConsoleApplication(gunicorn_options("::1", 8011, 3, 4))
    assert app.cfg.bind == ["[::1]:8011"] and app.cfg.workers == 3
    # Threaded workers: one request's Python runs while another's query waits.
    assert app.cfg.worker_class_str == "gthread" and app.cfg.threads == 4
    assert app.cfg.preload_app is True
    try:
        assert app.wsgi() is application
        # Loaded before the fork, then out of the collector's reach (see load()).
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
