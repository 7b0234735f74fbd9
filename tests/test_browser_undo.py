"""Undo in a real browser: invalidate, then reinstate, then revert, all swapped in place."""

import re

import pytest
from playwright.sync_api import expect

from memory_core import writes
from memory_core.models import LedgerEvent, Memory
from tests.browser import log_in

pytestmark = pytest.mark.browser


def test_reinstate_then_revert_on_the_memory_page(page, org, users):
    memory = writes.publish(org.acme, "fiscal-year", "starts in October", principal=users.p_owner)
    log_in(page, "owner", "pw-owner-123")
    page.goto(f"/memories/{memory.uid}/")
    page.evaluate("window.__sameDocument = 'yes'")

    page.fill("#invalidate-reason", "not true")
    page.click("#invalidate button[type=submit]")
    expect(page.locator("#reinstate button[type=submit]")).to_be_visible()
    page.click("#reinstate button[type=submit]")
    expect(page.locator("#memory-content ul.flash")).to_contain_text("Reinstated:")
    live = Memory.objects.get(key="fiscal-year", retired_at=None)
    expect(page).to_have_url(re.compile(f"/memories/{live.uid}/$"))
    expect(page.locator("h1 .state")).to_have_text("live")

    page.fill("#correct-text", "starts in April")
    page.click("#correct button[type=submit]")
    expect(page.locator("p.fact")).to_have_text("starts in April")
    # Each earlier text is offered once, by its newest version: the reinstated one.
    page.select_option("#revert-version", live.uid)
    page.click("#revert button[type=submit]")
    expect(page.locator("p.fact")).to_have_text("starts in October")
    expect(page.locator("#memory-content ul.flash")).to_contain_text("Reverted")
    assert page.evaluate("window.__sameDocument") == "yes"
    event = LedgerEvent.objects.get(kind="memory.reverted")
    assert event.payload["restores"] == live.uid
