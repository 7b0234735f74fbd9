"""Capture in the console: the conversation page lists what was extracted from it (memories
linked, the run), administrators may "Extract now" (auditors 403, others 404), and the
dashboard shows the extractor's state within the user's grants."""

import pytest

from memory_core import transcripts
from memory_core.capture import queue
from memory_core.capture.service import extract_thread
from memory_core.errors import Unavailable
from memory_core.models import AccessLog, CaptureJob, Extraction, LedgerEvent, Memory
from memory_core.models.capture import Trigger
from tests.chat_server import ChatServer
from tests.helpers import use_server

THREAD = "t-cap"
EXTRACT = "/capture/extract/"


@pytest.fixture(autouse=True)
def _fresh_extractor(fresh_extractor):
    pass


@pytest.fixture
def model(settings):
    with ChatServer(script=[{"key": "home-city", "fact": "lives in Lisbon"}]) as server:
        use_server(settings, server)
        yield server


@pytest.fixture
def thread(org):
    say = transcripts.record_message
    say(org.u1, THREAD, "user", "I moved to <b>Lisbon</b>", principal=org.acme_agent, run_id="r-7")
    return say(org.u1, THREAD, "assistant", "Noted.", principal=org.acme_agent, run_id="r-7")


def test_the_conversation_page_lists_what_was_extracted_from_it(client, users, model, thread, org):
    done = extract_thread(org.u1, THREAD, principal=org.acme_agent, trigger=Trigger.API)
    [memory] = done.written
    client.force_login(users.auditor)
    page = client.get(f"/threads/{THREAD}/")
    assert page.status_code == 200
    html = page.text
    assert 'id="capture-acme/u1"' in html and f'id="extraction-{done.record.uid}"' in html
    assert f'href="/memories/{memory.uid}/"><code>home-city</code>' in html
    assert f"#msg-{thread.uid}" in html  # the message it read up to
    assert f'href="/threads/{THREAD}/?actor=acme%2Fu1&amp;run=r-7"' in html  # and its run
    assert "&lt;b&gt;Lisbon&lt;/b&gt;" in html and "<b>Lisbon</b>" not in html
    assert "Extract now" not in html  # an auditor changes nothing
    row = AccessLog.objects.filter(action="thread.read").latest("id")
    assert memory.uid in row.memory_ids


def test_a_failed_extraction_is_listed_as_such(client, users, settings, thread, org):
    with ChatServer(mode="down") as server:
        use_server(settings, server)
        with pytest.raises(Unavailable):
            extract_thread(org.u1, THREAD, principal=org.acme_agent, trigger=Trigger.API)
    client.force_login(users.owner)
    html = client.get(f"/threads/{THREAD}/").text
    assert "failed</span> unreachable" in html


def test_an_administrator_extracts_now_and_the_ledger_names_them(client, users, model, thread, org):
    client.force_login(users.owner)
    assert "Extract now" in client.get(f"/threads/{THREAD}/").text
    answer = client.post(EXTRACT, {"actor": "acme/u1", "thread": THREAD}, follow=True)
    assert answer.redirect_chain[-1] == (f"/threads/{THREAD}/?actor=acme%2Fu1", 302)
    assert "Extracted 2 message(s): 1 memory written" in answer.text
    memory = Memory.objects.get(key="home-city")
    assert (memory.author, memory.scope.token) == ("agent", "actor:acme/u1")
    record = Extraction.objects.get()
    assert (record.trigger, record.principal) == ("console", "user:owner")
    assert LedgerEvent.objects.get(kind="capture.extracted").principal == "user:owner"
    again = client.post(EXTRACT, {"actor": "acme/u1", "thread": THREAD}, follow=True)
    assert "Nothing new to extract" in again.text
    assert Memory.objects.count() == 1


def test_an_auditor_may_not_extract(client, users, model, thread):
    client.force_login(users.auditor)
    answer = client.post(EXTRACT, {"actor": "acme/u1", "thread": THREAD})
    assert answer.status_code == 403
    row = AccessLog.objects.get(action="extract")
    assert (row.outcome, row.principal, row.channel) == (403, "user:auditor", "console")
    assert not model.requests and not Memory.objects.exists() and not Extraction.objects.exists()


def test_a_thread_beyond_the_grants_is_404(client, users, model, thread):
    client.force_login(users.outsider)
    answer = client.post(EXTRACT, {"actor": "acme/u1", "thread": THREAD})
    assert answer.status_code == 404
    assert AccessLog.objects.filter(action="extract", outcome=404).exists()
    assert not model.requests and not Memory.objects.exists()


def test_a_bad_form_is_422_and_a_get_goes_to_the_conversations(client, users, model, thread):
    client.force_login(users.owner)
    assert client.post(EXTRACT, {"actor": "acme/u1"}).status_code == 422
    answer = client.get(EXTRACT)
    assert answer.status_code == 303 and answer["Location"] == "/threads/"
    assert not Memory.objects.exists()


def test_with_extraction_off_the_page_says_so(client, users, settings, thread):
    settings.MEMORY_EXTRACTOR = "none"
    client.force_login(users.owner)
    html = client.get(f"/threads/{THREAD}/").text
    assert "capture is off on this server" in html and "Extract now" not in html
    answer = client.post(EXTRACT, {"actor": "acme/u1", "thread": THREAD}, follow=True)
    assert "extraction is off" in answer.text
    assert not Extraction.objects.exists()


def test_an_unreachable_model_is_said_on_the_page(client, users, settings, thread):
    with ChatServer(mode="down") as server:
        use_server(settings, server)
        client.force_login(users.owner)
        answer = client.post(EXTRACT, {"actor": "acme/u1", "thread": THREAD}, follow=True)
    assert "cannot be reached; nothing was written" in answer.text
    assert not Memory.objects.exists()


# --- the dashboard ----------------------------------------------------------------------


def test_the_dashboard_says_capture_is_off(client, users, settings):
    settings.MEMORY_EXTRACTOR = "none"
    client.force_login(users.owner)
    html = client.get("/").text
    assert 'id="capture-state"' in html and "MEMORY_EXTRACTOR=none" in html


def test_the_dashboard_shows_the_queue_and_the_last_failure_within_the_grants(
    client, users, settings, thread, org
):
    with ChatServer(mode="down") as server:
        use_server(settings, server, MEMORY_EXTRACTOR_KEY="sk-never-shown")
        settings.MEMORY_EXTRACTOR_URL = server.url.replace("http://", "http://user:pw@")
        queue.enqueue(org.u1, THREAD)
        assert queue.drain() == {"failed": 1}
        client.force_login(users.owner)
        html = client.get("/").text
    assert '<span class="state state-live">on</span>' in html
    assert "<code>fake-chat</code>" in html
    assert "sk-never-shown" not in html and "user:pw" not in html
    assert '<strong id="capture-queued">1</strong>' in html and 'id="capture-retrying">1<' in html
    assert '<strong id="capture-failed">1</strong>' in html
    assert "unreachable</span> reading" in html and f"<code>{THREAD}</code>" in html
    # Another tenant's administrator sees none of acme's queue or failures.
    client.force_login(users.outsider)
    html = client.get("/").text
    assert '<strong id="capture-queued">0</strong>' in html and THREAD not in html
    assert CaptureJob.objects.count() == 1
