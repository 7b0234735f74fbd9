"""Attribution in a real browser: paste a prompt line, follow it to the conversation."""

import pytest

from memory_core import forgetting, transcripts, turns, writes
from tests.browser import log_in, screenshot

pytestmark = pytest.mark.browser


@pytest.fixture
def taught(org):
    agent = org.acme_agent
    say = transcripts.record_message
    say(org.u1, "t-1", "user", "Hi! I moved to Berlin last week.", principal=agent, run_id="run-0")
    say(org.u1, "t-1", "user", "Please note I work in CET now.", principal=agent, run_id="run-1")
    say(org.u1, "t-1", "assistant", "Noted: you work in CET.", principal=agent, run_id="run-1")
    first = writes.remember(
        org.u1,
        "tz",
        "works in CET",
        principal=agent,
        run_id="run-1",
        thread_id="t-1",
        tool_call_id="call-1",
    ).memory
    turns.resolve_turn(org.u1, "run-2", principal=agent, thread_id="t-1", query="stand-up time")
    say(org.u1, "t-1", "user", "When is the stand-up?", principal=agent, run_id="run-2")
    return first


def test_pasting_a_prompt_line_leads_to_the_conversation_that_taught_it(page, users, taught):
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    log_in(page, "auditor", "pw-audit-123")
    page.click("nav.mainnav >> text=Attribution")
    page.wait_for_url("**/attribution/")
    page.fill("#attribution-line", "   [actor:acme/u1] tz: works in CET   ")
    page.click("#attribution-results >> xpath=preceding::button[@type='submit'][1]")
    page.wait_for_selector(f"#trace-{taught.uid}")
    assert "line=" in page.url  # htmx pushed the address: the result can be bookmarked
    trace = page.inner_text(f"#trace-{taught.uid}")
    assert "works in CET" in trace and "call-1" in trace
    highlighted = page.inner_text(".run-group.highlighted")
    assert "Please note I work in CET now." in highlighted
    assert "Noted: you work in CET." in highlighted
    assert "originating run" in highlighted.lower()
    assert "When is the stand-up?" not in highlighted
    screenshot(page, "console-attribution.png")

    # The carrying run's page shows the same line, linked to the memory version.
    page.click("table.carried >> text=run-2")
    page.wait_for_url("**/runs/acme/u1/run-2/")
    assert "- [actor:acme/u1] tz: works in CET" in page.inner_text("table.lines")
    page.click(f"table.lines >> text={taught.uid}")
    page.wait_for_url(f"**/memories/{taught.uid}/")
    assert dialogs == []


def test_a_forgotten_line_in_the_browser_shows_who_forgot_it_and_no_text(page, users, taught):
    forgetting.forget(taught, principal=users.p_owner)
    log_in(page, "auditor", "pw-audit-123")
    page.goto("/attribution/")
    page.fill("#attribution-run", "run-2")
    page.press("#attribution-run", "Enter")
    page.wait_for_selector(f"#trace-{taught.uid}")
    body = page.inner_text("body")
    assert "Forgotten" in body and "user:owner" in body
    assert "works in CET" not in body
