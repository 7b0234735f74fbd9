"""Capture in a real browser: an administrator extracts a conversation from its page, sees
what was written (linked), and the page fits a phone's width."""

import pytest
from playwright.sync_api import expect

from memory_core import transcripts
from memory_core.capture import extractor
from memory_core.models import Memory
from tests.browser import log_in, screenshot
from tests.chat_server import ChatServer
from tests.helpers import use_server

pytestmark = pytest.mark.browser

THREAD = "t-browser"


@pytest.fixture
def model(settings):
    extractor.reset()
    items = [
        {"key": "home-city", "fact": "lives in Lisbon"},
        {"key": "work", "fact": "works remotely as a data engineer"},
        {"key": "bad key", "fact": "dropped"},
    ]
    with ChatServer(script=items) as server:
        use_server(settings, server)
        yield server
    extractor.reset()


def test_an_administrator_extracts_a_conversation_from_its_page(page, org, users, model):
    say = transcripts.record_message
    say(
        org.u1,
        THREAD,
        "user",
        "I moved to Lisbon <script>x</script>",
        principal=org.acme_agent,
        run_id="r-1",
    )
    say(org.u1, THREAD, "assistant", "Welcome!", principal=org.acme_agent, run_id="r-1")
    say(org.u1, THREAD, "user", "I work remotely as a data engineer.", principal=org.acme_agent)

    log_in(page, "owner", "pw-owner-123")
    page.goto(f"/threads/{THREAD}/")
    section = page.locator("#capture-acme\\/u1")
    expect(section).to_contain_text("Nothing was extracted from this conversation")
    section.get_by_role("button", name="Extract now").click()
    expect(page.locator(".flash-success")).to_contain_text("2 memories written")
    row = page.locator("tr.extraction").first
    expect(row).to_contain_text("home-city")
    expect(row.locator("td.num").nth(2)).to_have_text("1")  # the bad key, dropped
    screenshot(page, "console-capture.png")

    for width in (390, 1024):
        page.set_viewport_size({"width": width, "height": 900})
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{overflow}px of sideways scrolling at {width}px"

    row.get_by_role("link", name="home-city").click()
    memory = Memory.objects.get(key="home-city")
    expect(page).to_have_url(f"{page.url.split('/memories/')[0]}/memories/{memory.uid}/")
    assert (memory.author, memory.scope.token) == ("agent", "actor:acme/u1")
