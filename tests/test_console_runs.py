"""The runs pages: recent turns with their stats, and one run's block line by line."""

import re

import pytest
from django.urls import reverse
from django.utils.html import escape

from memory_console.console.common.links import run_path
from memory_console.console.runs import reads as runs_view
from memory_core import curation, forgetting, transcripts, turns, writes
from memory_core.models import AccessLog, Digest


@pytest.fixture
def u1_run(org):
    """A turn of u1 whose block carries an agent note and a tenant policy."""
    agent = org.acme_agent
    transcripts.record_message(org.u1, "t-1", "user", "hello", principal=agent, run_id="run-1")
    note = writes.remember(org.u1, "tz", "works in CET", principal=agent, run_id="run-1").memory
    turns.resolve_turn(org.u1, "run-1", principal=agent, thread_id="t-1", query="what time zone")
    return Digest.objects.get(actor=org.u1, run_id="run-1"), note


@pytest.fixture
def x9_run(org):
    writes.remember(org.x9, "tz", "works in PST", principal=org.globex_agent)
    turns.resolve_turn(org.x9, "g-1", principal=org.globex_agent)
    return Digest.objects.get(actor=org.x9, run_id="g-1")


def _listed(response) -> list[str]:
    return re.findall(r'<td class="uid"><a href="/runs/([^"]+)/">', response.text)


# --- the list --------------------------------------------------------------------------------


def test_anonymous_is_sent_to_login(client, users, u1_run):
    for path in ("/runs/", "/runs/acme/u1/run-1/"):
        response = client.get(path)
        assert response.status_code == 302
        assert response["Location"] == f"/login/?next={path}"


@pytest.mark.parametrize(
    "who, expected",
    [
        ("su", ["globex/x9/g-1", "acme/u1/run-1"]),
        ("owner", ["acme/u1/run-1"]),
        ("auditor", ["acme/u1/run-1"]),
        ("outsider", ["globex/x9/g-1"]),
    ],
)
def test_each_reader_lists_the_runs_of_their_grants(client, users, u1_run, x9_run, who, expected):
    client.force_login(getattr(users, who))
    response = client.get("/runs/")
    assert response.status_code == 200
    assert _listed(response) == expected


def test_the_list_shows_stats_query_and_thread(client, users, u1_run):
    client.force_login(users.auditor)
    text = client.get("/runs/").text
    assert "what time zone" in text
    assert 'href="/threads/t-1/?actor=acme%2Fu1"' in text
    assert "1 / 1" in text  # kept / offered


def test_filter_by_actor(client, users, org, u1_run, x9_run):
    turns.resolve_turn(org.u2, "run-u2", principal=org.acme_agent)
    client.force_login(users.su)
    assert _listed(client.get("/runs/?actor=acme%2Fu2")) == ["acme/u2/run-u2"]
    client.force_login(users.owner)
    assert _listed(client.get("/runs/?actor=acme%2Fu1")) == ["acme/u1/run-1"]
    # Another tenant's actor is an empty list, exactly like an unknown one.
    response = client.get("/runs/?actor=x9")
    assert response.status_code == 200 and _listed(response) == []


def test_cursor_paging_newest_first(client, users, org, monkeypatch):
    monkeypatch.setattr(runs_view, "PAGE_SIZE", 3)
    for n in range(7):
        turns.resolve_turn(org.u1, f"r{n}", principal=org.acme_agent)
    client.force_login(users.auditor)
    pages, url = [], "/runs/?actor=acme%2Fu1"
    while url:
        response = client.get(url)
        pages.append(_listed(response))
        older = re.search(r'href="(/runs/\?[^"]*before=[^"]+)"[^>]*rel="next"', response.text)
        url = older.group(1).replace("&amp;", "&") if older else None
    assert pages == [
        ["acme/u1/r6", "acme/u1/r5", "acme/u1/r4"],
        ["acme/u1/r3", "acme/u1/r2", "acme/u1/r1"],
        ["acme/u1/r0"],
    ]


def test_pinned_omitted_turns_are_flagged(client, users, org, settings):
    settings.MEMORY_MAX_LINES = 1
    for key in ("a", "b"):
        memory = writes.publish(org.acme, key, f"pinned {key}", principal=users.p_owner)
        curation.set_pinned(memory, True, principal=users.p_owner)
    turns.resolve_turn(org.u1, "tight", principal=org.acme_agent)
    client.force_login(users.auditor)
    assert '<tr class="alert">' in client.get("/runs/").text


def test_htmx_gets_only_the_rows(client, users, u1_run):
    client.force_login(users.auditor)
    response = client.get("/runs/?actor=acme%2Fu1", headers={"HX-Request": "true"})
    assert response.text.lstrip().startswith('<section id="run-rows"')
    assert "<html" not in response.text
    assert "HX-Request" in response["Vary"]


def test_listing_writes_an_access_log_row(client, users, u1_run):
    client.force_login(users.auditor)
    client.get("/runs/?actor=acme%2Fu1")
    row = AccessLog.objects.get(action="run.list")
    assert row.principal == "user:auditor" and row.actor_ref == "acme/u1" and row.count == 1


# --- one run ---------------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["su", "owner", "auditor"])
def test_readers_open_the_run_page(client, users, u1_run, who):
    digest, note = u1_run
    client.force_login(getattr(users, who))
    response = client.get("/runs/acme/u1/run-1/")
    assert response.status_code == 200
    assert "- [actor:acme/u1] tz: works in CET" in response.text
    assert f'href="/memories/{note.uid}/"' in response.text


def test_outsider_and_unknown_runs_are_404(client, users, u1_run, x9_run):
    client.force_login(users.outsider)
    response = client.get("/runs/acme/u1/run-1/")
    assert response.status_code == 404
    assert "works in CET" not in response.text
    assert client.get("/runs/globex/x9/g-1/").status_code == 200
    client.force_login(users.auditor)
    assert client.get("/runs/globex/x9/g-1/").status_code == 404
    assert client.get("/runs/acme/u1/no-such-run/").status_code == 404
    assert client.get("/runs/nobody/run-1/").status_code == 404


def test_the_run_page_shows_lines_in_order_stats_query_chain_and_thread(client, users, org):
    policy = writes.publish(org.acme, "units", "kilometres", principal=users.p_owner)
    note = writes.remember(org.u1, "tz", "works in CET", principal=org.acme_agent).memory
    transcripts.record_message(org.u1, "t-9", "user", "hi", principal=org.acme_agent, run_id="r")
    turns.resolve_turn(org.u1, "r", principal=org.acme_agent, thread_id="t-9", query="units?")
    client.force_login(users.auditor)
    text = client.get("/runs/acme/u1/r/").text
    human = text.index("- [tenant:acme] units: kilometres")
    agent = text.index("- [actor:acme/u1] tz: works in CET")
    assert human < agent  # the block's order: people first, then the agent's own notes
    assert f'href="/memories/{policy.uid}/"' in text and f'href="/memories/{note.uid}/"' in text
    assert "units?" in text
    assert 'href="/threads/t-9/?actor=acme%2Fu1&amp;run=r"' in text
    for token in ("actor", "team", "tenant", "global"):
        assert f"chip chip-{token}" in text
    assert 'href="/scopes/global/"' not in text  # outside the auditor's grants: no link
    assert '<span class="k">offered</span> 2' in text
    assert 'href="/attribution/?run=r&amp;actor=acme%2Fu1"' in text


def test_a_forgotten_line_shows_forgotten_with_when_and_by_whom(client, users, u1_run):
    digest, note = u1_run
    forgetting.forget(note, principal=users.p_owner)
    client.force_login(users.auditor)
    text = client.get("/runs/acme/u1/run-1/").text
    assert "forgotten" in text
    assert "by user:owner" in text
    assert f'href="/memories/{note.uid}/"' not in text
    assert "works in CET" not in text


def test_a_line_held_outside_the_grants_is_not_linked(client, users, org):
    policy = writes.publish(org.root, "units", "kilometres", principal=users.p_su)
    turns.resolve_turn(org.u1, "r", principal=org.acme_agent)
    client.force_login(users.auditor)
    text = client.get("/runs/acme/u1/r/").text
    assert policy.uid in text and f'href="/memories/{policy.uid}/"' not in text
    assert "outside your grants" in text


def test_a_pruned_thread_is_named_but_not_linked(client, users, operator, u1_run):
    transcripts.prune_history(0, principal=operator)
    client.force_login(users.auditor)
    text = client.get("/runs/acme/u1/run-1/").text
    assert "no longer stored" in text and "was pruned" in text
    assert "no messages recorded" not in text
    assert 'href="/threads/t-1/' not in text
    listed = client.get("/runs/").text
    assert 'href="/threads/t-1/' not in listed
    assert "pruned" in listed and "no messages recorded" not in listed


def test_a_thread_with_no_messages_yet_is_not_called_pruned_nor_linked(client, users, org):
    turns.resolve_turn(org.u1, "run-2", principal=org.acme_agent, thread_id="t-empty")
    client.force_login(users.auditor)
    text = client.get("/runs/acme/u1/run-2/").text
    assert "no messages recorded" in text and "t-empty" in text
    assert "pruned" not in text and "no longer stored" not in text
    assert 'href="/threads/t-empty/' not in text
    listed = client.get("/runs/").text
    assert "t-empty" in listed and "no messages recorded" in listed
    assert 'href="/threads/t-empty/' not in listed and "pruned" not in listed
    # The link appears once the host records a message in the thread.
    transcripts.record_message(org.u1, "t-empty", "user", "hi", principal=org.acme_agent)
    assert 'href="/threads/t-empty/?actor=acme%2Fu1"' in client.get("/runs/").text


def test_a_prune_before_the_turn_does_not_make_its_empty_thread_pruned(
    client, users, org, operator
):
    transcripts.record_message(org.u1, "t-old", "user", "hi", principal=org.acme_agent)
    transcripts.prune_history(0, principal=operator)  # removes t-old, before the turn
    turns.resolve_turn(org.u1, "run-3", principal=org.acme_agent, thread_id="t-new")
    client.force_login(users.auditor)
    text = client.get("/runs/acme/u1/run-3/").text
    assert "no messages recorded" in text and "pruned" not in text


def test_thread_state_rule():
    from datetime import UTC, datetime, timedelta

    at = datetime(2026, 1, 1, tzinfo=UTC)
    state = transcripts.thread_state
    assert state(None, stored=False, turn_at=at, last_prune_at=None) == "none"
    assert state("t", stored=True, turn_at=at, last_prune_at=at) == "stored"
    assert state("t", stored=False, turn_at=at, last_prune_at=None) == "not_recorded"
    before = at - timedelta(seconds=1)
    assert state("t", stored=False, turn_at=at, last_prune_at=before) == "not_recorded"
    assert state("t", stored=False, turn_at=at, last_prune_at=at) == "pruned"


@pytest.mark.parametrize("run_id", ["batch/7", "a b?c#d%e", "ends-with/"])
def test_run_ids_with_slashes_and_reserved_characters_have_a_page(client, users, org, run_id):
    writes.remember(org.u1, "tz", "works in CET", principal=org.acme_agent)
    turns.resolve_turn(org.u1, run_id, principal=org.acme_agent)
    client.force_login(users.auditor)
    url = reverse("console:run", args=[f"acme/u1/{run_id}"])
    response = client.get(url)
    assert response.status_code == 200
    assert "- [actor:acme/u1] tz: works in CET" in response.text
    # The list links to it with the run id encoded whole, and that address works too.
    link = run_path("acme/u1", run_id)
    assert link.startswith("/runs/acme/u1/") and "/" not in link[len("/runs/acme/u1/") : -1]
    assert f'href="{escape(link)}"' in client.get("/runs/").text
    assert client.get(link).status_code == 200


def test_the_memory_pages_run_links_resolve(client, users, org):
    """memory.html builds /runs/<actor>/<run_id|urlencode:''>/ (a "/" sent as %2F)."""
    note = writes.remember(org.u1, "tz", "works in CET", principal=org.acme_agent).memory
    turns.resolve_turn(org.u1, "batch/7", principal=org.acme_agent)
    client.force_login(users.auditor)
    link = re.search(r'href="(/runs/acme/u1/[^"]+)"', client.get(f"/memories/{note.uid}/").text)
    assert link.group(1) == "/runs/acme/u1/batch%2F7/"
    assert client.get(link.group(1)).status_code == 200


def test_hostile_text_is_escaped(client, users, org):
    writes.remember(org.u1, "xss", "<script>alert(1)</script>", principal=org.acme_agent)
    turns.resolve_turn(org.u1, "r", principal=org.acme_agent, query="<b onmouseover=alert(2)>")
    client.force_login(users.auditor)
    for path in ("/runs/acme/u1/r/", "/runs/"):
        text = client.get(path).text
        assert "<script>alert" not in text and "<b onmouseover" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in client.get("/runs/acme/u1/r/").text


def test_reading_a_run_writes_an_access_log_row(client, users, u1_run):
    digest, note = u1_run
    client.force_login(users.auditor)
    client.get("/runs/acme/u1/run-1/")
    row = AccessLog.objects.get(action="run.read")
    assert row.channel == "console" and row.principal == "user:auditor"
    assert row.actor_ref == "acme/u1" and row.scope == "actor:acme/u1"
    assert row.memory_ids == [note.uid] and row.count == 1
    assert "CET" not in repr(row.detail)
