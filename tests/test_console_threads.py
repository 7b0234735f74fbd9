"""The conversation page: a thread's messages grouped by run, for readers of its actor."""

import re

import pytest
from django.urls import reverse

from memory_console.console.runs import reads as threads_view
from memory_core import transcripts, turns, writes
from memory_core.models import AccessLog


@pytest.fixture
def conversation(org):
    """Thread t-1 of u1: two messages in run-1 (which taught a memory), one in run-2."""
    agent = org.acme_agent
    say = transcripts.record_message
    say(org.u1, "t-1", "user", "I work in CET", principal=agent, run_id="run-1")
    say(org.u1, "t-1", "assistant", "Noted.", principal=agent, run_id="run-1")
    memory = writes.remember(
        org.u1, "tz", "works in CET", principal=agent, run_id="run-1", thread_id="t-1"
    ).memory
    turns.resolve_turn(org.u1, "run-2", principal=agent, thread_id="t-1")
    say(org.u1, "t-1", "user", "When is lunch?", principal=agent, run_id="run-2")
    return memory


@pytest.fixture
def shared_ref(org, conversation):
    """x9 (globex) has a thread called t-1 too: thread ids are unique per actor only."""
    transcripts.record_message(
        org.x9, "t-1", "user", "globex secret plans", principal=org.globex_agent, run_id="g-1"
    )


def _groups(text: str) -> list[list[str]]:
    """Each run group's message texts, in page order."""
    return [
        re.findall(r'<div class="msg-text">(.*?)</div>', group, flags=re.S)
        for group in re.findall(r'<li class="run-group.*?</li>', text, flags=re.S)
    ]


def test_anonymous_is_sent_to_login(client, users, conversation):
    response = client.get("/threads/t-1/")
    assert response.status_code == 302
    assert response["Location"] == "/login/?next=/threads/t-1/"


@pytest.mark.parametrize("who", ["su", "owner", "auditor"])
def test_readers_see_the_messages_grouped_by_run(client, users, conversation, who):
    client.force_login(getattr(users, who))
    response = client.get("/threads/t-1/")
    assert response.status_code == 200
    assert _groups(response.text) == [["I work in CET", "Noted."], ["When is lunch?"]]
    # run-2 stored a digest, so its group links to the run page; run-1 did not.
    assert 'href="/runs/acme/u1/run-2/"' in response.text
    assert 'href="/runs/acme/u1/run-1/"' not in response.text
    # The memory learned in run-1 is listed with it.
    assert f'href="/memories/{conversation.uid}/"' in response.text


def test_outsider_and_unknown_threads_are_404(client, users, conversation):
    client.force_login(users.outsider)
    response = client.get("/threads/t-1/")
    assert response.status_code == 404
    assert "I work in CET" not in response.text
    client.force_login(users.su)
    assert client.get("/threads/no-such-thread/").status_code == 404


def test_a_shared_thread_id_shows_only_what_each_reader_may_read(client, users, shared_ref):
    client.force_login(users.su)
    text = client.get("/threads/t-1/").text
    assert 'id="thread-acme/u1"' in text and 'id="thread-globex/x9"' in text
    assert 'href="/threads/t-1/?actor=globex%2Fx9"' in text  # pick one
    client.force_login(users.owner)
    text = client.get("/threads/t-1/").text
    assert 'id="thread-acme/u1"' in text and "globex secret plans" not in text
    assert client.get("/threads/t-1/?actor=globex/x9").status_code == 404
    client.force_login(users.outsider)
    text = client.get("/threads/t-1/").text
    assert "globex secret plans" in text and "I work in CET" not in text


def test_actor_picks_one_thread(client, users, shared_ref):
    client.force_login(users.su)
    text = client.get("/threads/t-1/?actor=globex/x9").text
    assert "globex secret plans" in text and "I work in CET" not in text


def test_a_run_can_be_highlighted(client, users, conversation):
    client.force_login(users.auditor)
    text = client.get("/threads/t-1/?actor=acme%2Fu1&run=run-1").text
    highlighted = re.findall(r'<li class="run-group highlighted".*?</li>', text, flags=re.S)
    assert len(highlighted) == 1 and "I work in CET" in highlighted[0]


def test_cursor_paging_shows_the_newest_page_first(client, users, org, monkeypatch):
    monkeypatch.setattr(threads_view, "PAGE_MESSAGES", 2)
    for n in range(5):
        transcripts.record_message(org.u1, "long", "user", f"message {n}", principal=org.acme_agent)
    client.force_login(users.auditor)
    pages, url = [], "/threads/long/"
    while url:
        text = client.get(url).text
        pages.append(re.findall(r"message (\d)", text))
        older = re.search(r'rel="prev" href="([^"]+)"', text)
        url = older.group(1).replace("&amp;", "&") if older else None
    assert pages == [["3", "4"], ["1", "2"], ["0"]]


def test_thread_ids_with_slashes_have_a_page(client, users, org):
    transcripts.record_message(org.u1, "inbox/42", "user", "hello", principal=org.acme_agent)
    client.force_login(users.auditor)
    url = reverse("console:thread", args=["inbox/42"])
    assert url == "/threads/inbox/42/"
    assert "hello" in client.get(url).text
    assert client.get("/threads/inbox%2F42/").status_code == 200  # memory.html's link form


def test_hostile_messages_are_escaped(client, users, org):
    hostile = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    transcripts.record_message(org.u1, "t-x", "user", hostile, principal=org.acme_agent)
    client.force_login(users.auditor)
    text = client.get("/threads/t-x/").text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;" in text
    assert "<script>alert" not in text and "<img src=x" not in text


def test_reading_writes_an_access_log_row_per_thread(client, users, shared_ref, conversation):
    client.force_login(users.su)
    client.get("/threads/t-1/")
    rows = {row.actor_ref: row for row in AccessLog.objects.filter(action="thread.read")}
    assert set(rows) == {"acme/u1", "globex/x9"}
    assert rows["acme/u1"].memory_ids == [conversation.uid]
    assert rows["acme/u1"].count == 3 and rows["acme/u1"].channel == "console"
    assert "CET" not in repr(rows["acme/u1"].detail)
