"""The memory finder and a bulk action in a real browser: filtering swaps the rows in
(htmx), and selecting rows, confirming and reading the per-memory report works end to end."""

import pytest
from playwright.sync_api import expect

from memory_core import writes
from memory_core.models import LedgerEvent, Memory
from tests.browser import log_in, screenshot

pytestmark = pytest.mark.browser


def test_finder_filters_in_place_and_bulk_pins_the_selection(page, org, users):
    fy = writes.publish(org.acme, "fiscal-year", "starts in October", principal=users.p_owner)
    oncall = writes.publish(org.ops, "oncall", "Dana is on call", principal=users.p_owner)
    writes.publish(org.globex, "globex-only", "not for acme", principal=users.p_su)
    log_in(page, "owner", "pw-owner-123")

    page.goto("/memories/")
    rows = page.locator("#finder-rows tbody tr")
    expect(rows).to_have_count(2)  # globex's memory is beyond the grants
    page.evaluate("window.__sameDocument = 'yes'")
    page.locator("#finder-q").press_sequentially("october")  # typing: keyup triggers htmx
    page.locator("#finder-rows").filter(has_text="1 memory match").wait_for()
    expect(rows).to_have_count(1)
    assert page.evaluate("window.__sameDocument") == "yes"
    screenshot(page, "console-finder.png")

    page.fill("#finder-q", "")
    page.press("#finder-q", "Enter")
    page.locator("#finder-rows").filter(has_text="2 memories").wait_for()
    page.check(f"input[name=m][value='{fy.uid}']")
    page.check(f"input[name=m][value='{oncall.uid}']")
    page.select_option("#bulk-form select[name=action]", "pin")
    page.click("#bulk-form button[type=submit]")

    expect(page.locator("h1")).to_have_text("Pin 2 memories?")
    assert not Memory.objects.filter(pinned=True).exists()
    page.click("#bulk-confirm button[type=submit]")

    expect(page.locator("h1")).to_have_text("Pin: 2 of 2 done")
    expect(page.locator("#bulk-outcomes tbody tr")).to_have_count(2)
    screenshot(page, "console-bulk-report.png")
    assert Memory.objects.filter(pinned=True).count() == 2
    events = LedgerEvent.objects.filter(kind="memory.pinned")
    assert len({e.payload["bulk"] for e in events}) == 1
