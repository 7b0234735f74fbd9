"""Names as people type them in the console's filters (common/names.py): relative to the
tenant a user's grants lie in (`u1`, `team:ops`, a pasted `[team:ops] …` line), qualified
for everyone else, and an ambiguous bare name said so — never a silent empty result."""

import html
import json
import re
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.contrib.auth import get_user_model
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_console.console.common.names import Names, Resolved, single_tenant
from memory_core import actors, transcripts, turns, writes
from memory_core.accounts.grants import grant
from memory_core.accounts.principals import Principal
from memory_core.ledger import access_log
from memory_core.models import AccessLog, Actor, Scope
from tests.helpers import login

NAMES = st.from_regex(r"[a-z0-9][a-z0-9._-]{0,11}", fullmatch=True)
TEAM_LINE = "- [team:acme/ops] oncall: page the on-call engineer"


@pytest.fixture
def world(org, users):
    """u1 (in ops) was given the ops note in run-2 of thread t-1; globex has a u1 too, and
    a `solo` actor lies outside every tenant. `roamer` audits both tenants."""
    agent = org.acme_agent
    writes.publish(org.ops, "oncall", "page the on-call engineer", principal=users.p_owner)
    transcripts.record_message(org.u1, "t-1", "user", "who is on call?", principal=agent)
    turns.resolve_turn(org.u1, "run-2", principal=agent, thread_id="t-1", query="on call")
    actors.put_actor("u1", "Globex One", ["tenant:globex"], org.globex_key, org.globex_agent)
    platform = Principal.for_api_key(org.global_key)
    actors.put_actor("solo", "Solo", [], org.global_key, platform)
    access_log.record(agent, "turn", 404, actor_ref="acme/u1", scope="actor:acme/u1")
    roamer = get_user_model().objects.create_user("roamer", "r@example.com", "pw-roam-123")
    grant("roamer", org.acme, "auditor", principal=users.p_su)
    grant("roamer", org.globex, "auditor", principal=users.p_su)
    users.roamer = roamer
    return users


def _alerts(text: str) -> list[str]:
    found = re.findall(r'<p class="error" role="alert">(.*?)</p>', text, re.S)
    return [html.unescape(alert) for alert in found]


def _access_ids(text: str) -> set[int]:
    return {int(i) for i in re.findall(r'<tr id="access-(\d+)"', text)}


# --- the rule (no database) ------------------------------------------------------------------


@pytest.mark.parametrize(
    "tokens, tenant",
    [
        (["tenant:acme"], "acme"),
        (["team:acme/ops", "actor:acme/u1", "tenant:acme"], "acme"),
        (["tenant:acme", "tenant:globex"], None),
        (["global"], None),
        (["team:ops"], None),  # outside every tenant
        (["tenant:acme", "global"], None),
        ([], None),
    ],
)
def test_names_are_relative_to_the_one_tenant_every_grant_lies_in(tokens, tenant):
    assert single_tenant(tokens) == tenant


# --- as a one-tenant reader types them -------------------------------------------------------


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(name=NAMES)
def test_a_one_tenant_reader_names_actors_scopes_and_lines_relative_to_it(world, name):
    names = Names(world.auditor)
    assert names.tenant == "acme"
    for typed in (name, f"acme/{name}"):
        assert names.actor(typed).value == f"acme/{name}"
        assert names.actor(typed).problem is None
    assert names.scope(f"team:{name}").value == f"team:acme/{name}"
    assert names.scope(f"actor:{name}").value == f"actor:acme/{name}"
    assert names.scope("tenant:acme").value == "tenant:acme"
    assert names.scope("global").value == "global"
    pasted = f"  - [team:{name}] some-key: a fact with [brackets]  "
    assert names.line(pasted).value == f"- [team:acme/{name}] some-key: a fact with [brackets]"
    # Another tenant's qualified name stays as typed: it finds nothing, as an unknown name.
    assert names.actor(f"globex/{name}") == Resolved(f"globex/{name}")
    assert names.scope(f"team:globex/{name}").value == f"team:globex/{name}"


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(name=NAMES)
def test_outside_one_tenant_a_bare_name_is_never_silently_empty(world, name):
    """For a superuser and a reader of several tenants, a bare name resolves to an actor
    outside every tenant they may read, or comes with a message; a qualified one stays."""
    for user in (world.su, world.roamer):
        names = Names(user)
        assert names.tenant is None
        resolved = names.actor(name)
        assert resolved.value == name
        readable_solo = user.is_superuser and Actor.objects.filter(ref=name).exists()
        assert (resolved.problem is None) == readable_solo
        if resolved.problem is not None:
            assert repr(name) in resolved.problem
        assert names.actor(f"acme/{name}").problem is None
        scope = names.scope(f"team:{name}")
        exists = user.is_superuser and Scope.objects.filter(token=f"team:{name}").exists()
        assert (scope.problem is None) == exists


def test_an_ambiguous_name_names_the_readable_candidates(world):
    assert Names(world.su).actor("u1").problem == (
        "'u1' is ambiguous: actors inside a tenant are named with it; "
        "did you mean acme/u1 or globex/u1?"
    )
    assert Names(world.roamer).scope("actor:u1").problem == (
        "'actor:u1' is ambiguous: scopes inside a tenant are named with it; "
        "did you mean actor:acme/u1 or actor:globex/u1?"
    )
    assert Names(world.su).actor("solo").problem is None  # outside every tenant: unambiguous
    assert "no actor you may read is named 'nobody'" in Names(world.su).actor("nobody").problem


# --- the pages ---------------------------------------------------------------------------------


def test_the_access_log_takes_a_relative_actor_and_shows_it_qualified(client, world):
    login(client, world.auditor)
    typed = client.get("/access/?actor=u1").text
    qualified = client.get("/access/?actor=acme/u1").text
    assert _access_ids(typed) == _access_ids(qualified) != set()
    assert _access_ids(typed) <= set(
        AccessLog.objects.filter(actor_ref="acme/u1").values_list("id", flat=True)
    )
    assert 'name="actor" value="acme/u1"' in typed and not _alerts(typed)


def test_the_runs_list_takes_a_relative_actor(client, world):
    text = login(client, world.auditor).get("/runs/?actor=u1").text
    assert "run-2" in text and 'value="acme/u1"' in text and not _alerts(text)
    row = AccessLog.objects.filter(action="run.list").latest("id")
    assert row.actor_ref == "acme/u1" and row.count == 1


def test_the_conversations_list_takes_a_relative_actor(client, world):
    text = login(client, world.auditor).get("/threads/?actor=u1").text
    assert "t-1" in text and not _alerts(text)


def test_attribution_takes_a_relative_actor_and_a_relative_line(client, world):
    login(client, world.auditor)
    by_run = client.get("/attribution/?" + urlencode({"run": "run-2", "actor": "u1"})).text
    assert 'id="attribution-actor" name="actor" value="acme/u1"' in by_run
    assert "No stored prompt line" not in by_run and "run-2" in by_run
    pasted = "- [team:ops] oncall: page the on-call engineer"
    by_line = client.get("/attribution/?" + urlencode({"line": pasted})).text
    assert '<table class="data carried">' in by_line and not _alerts(by_line)
    assert f'value="{TEAM_LINE}"' in by_line  # shown as stored
    row = AccessLog.objects.filter(action="attribution.read").latest("id")
    assert row.count == 1 and row.actor_ref == "acme/u1"


def test_the_ledger_takes_a_relative_scope(client, world):
    text = login(client, world.auditor).get("/ledger/?scope=team:ops").text
    assert 'value="team:acme/ops"' in text and "memory.published" in text


def test_another_tenants_name_finds_nothing_and_is_no_ambiguity(client, world):
    text = login(client, world.auditor).get("/access/?actor=globex/x9").text
    assert not _access_ids(text) and not _alerts(text)


@pytest.mark.parametrize("who", ["su", "roamer"])
@pytest.mark.parametrize(
    "address",
    [
        "/access/?actor=u1",
        "/runs/?actor=u1",
        "/threads/?actor=u1",
        "/attribution/?run=run-2&actor=u1",
    ],
)
def test_a_bare_name_outside_one_tenant_is_said_to_be_ambiguous(client, world, who, address):
    text = login(client, getattr(world, who)).get(address).text
    [alert] = _alerts(text)
    assert "'u1' is ambiguous" in alert and "acme/u1" in alert


def test_an_ambiguous_line_scope_is_said_so(client, world):
    pasted = "- [team:ops] oncall: page the on-call engineer"
    text = login(client, world.su).get("/attribution/?" + urlencode({"line": pasted})).text
    [alert] = _alerts(text)
    assert "'team:ops' is ambiguous" in alert and "team:acme/ops" in alert


def test_a_superuser_names_an_actor_outside_every_tenant_bare(client, world):
    text = login(client, world.su).get("/runs/?actor=solo").text
    assert not _alerts(text) and 'value="solo"' in text


@pytest.mark.parametrize(
    "export",
    ["/exports/access.csv?actor=u1", "/exports/attribution.jsonl?run=run-2&actor=u1"],
)
def test_an_export_refuses_an_ambiguous_name_with_the_same_message(client, world, export):
    response = login(client, world.su).get(export)
    assert response.status_code == 422 and not response.streaming
    assert "'u1' is ambiguous" in response.json()["detail"]
    assert not AccessLog.objects.filter(action__startswith="export.").exists()


def test_an_export_reads_a_relative_name_as_its_page_does(client, world):
    response = login(client, world.auditor).get("/exports/access.jsonl?actor=u1")
    lines = [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]
    rows, manifest = lines[:-1], lines[-1]["manifest"]
    assert rows and {row["actor_ref"] for row in rows} == {"acme/u1"}
    assert manifest["filters"]["actor"] == "acme/u1"


def test_placeholders_show_qualified_examples(client, world):
    login(client, world.auditor)
    pages = {path: client.get(path).text for path in ("/access/", "/runs/", "/attribution/")}
    for path, text in pages.items():
        assert 'placeholder="e.g. u1"' not in text and "(e.g. u1)" not in text, path
    assert 'placeholder="e.g. acme/u1"' in pages["/access/"]
    assert 'placeholder="any (e.g. acme/u1)"' in pages["/attribution/"]
    assert (
        "[team:acme/ops]" in pages["/attribution/"] and "[team:ops]" not in pages["/attribution/"]
    )
    assert 'placeholder="e.g. team:acme/ops"' in client.get("/ledger/").text


def test_the_export_link_carries_the_qualified_name(client, world):
    text = login(client, world.auditor).get("/access/?actor=u1").text
    href = re.search(r'<a href="(/exports/access\.csv[^"]*)"', text)[1].replace("&amp;", "&")
    assert parse_qs(urlsplit(href).query) == {"actor": ["acme/u1"]}
