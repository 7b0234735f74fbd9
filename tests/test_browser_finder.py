"""The memory finder and a bulk action in a real browser: filtering swaps the rows in
(htmx); selecting rows (ticked, or all on the page), reviewing, confirming and reading the
per-memory report works end to end; and reloading the report runs nothing again."""

import re

import pytest
from playwright.sync_api import expect

from memory_core import writes
from memory_core.models import AccessLog, LedgerEvent, Memory
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
    page.get_by_label("select fiscal-year at tenant:acme").check()
    page.get_by_label("select oncall at team:acme/ops").check()
    page.select_option("#bulk-form select[name=action]", "pin")
    page.get_by_role("button", name="Review the ticked…").click()

    expect(page.locator("h1")).to_have_text("Pin 2 memories?")
    expect(page.locator("#bulk-confirm")).to_contain_text("starts in October")
    assert not Memory.objects.filter(pinned=True).exists()
    page.click("#bulk-confirm button[type=submit]")

    expect(page.locator("h1")).to_have_text("Pin: 2 of 2 done")
    expect(page).to_have_url(re.compile(r"/memories/bulk/bulk_[0-9A-Z]{26}/"))
    expect(page.locator("#bulk-outcomes tbody tr")).to_have_count(2)
    screenshot(page, "console-bulk-report.png")
    assert Memory.objects.filter(pinned=True).count() == 2
    events = LedgerEvent.objects.filter(kind="memory.pinned")
    assert len({e.payload["bulk"] for e in events}) == 1
    assert {fy.uid, oncall.uid} == {e.payload["memory"] for e in events}


def test_reloading_a_bulk_report_makes_no_second_bulk(page, org, users):
    chosen = [
        writes.remember(actor, "timezone", "works in CET", principal=org.acme_agent).memory
        for actor in (org.u1, org.u2)
    ]
    log_in(page, "owner", "pw-owner-123")
    page.goto("/memories/?q=CET")
    page.locator("#finder-rows").filter(has_text="2 memories match").wait_for()
    page.select_option("#bulk-form select[name=action]", "republish")
    page.get_by_role("button", name="Review all on this page…").click()
    expect(page.locator("h1")).to_have_text("Republish wider 2 memories?")
    page.select_option("#bulk-target", "tenant:acme")
    page.get_by_label("Retire the originals").uncheck()
    page.click("#bulk-confirm button[type=submit]")
    expect(page.locator("h1")).to_have_text("Republish wider: 2 of 2 done")
    report_url = page.url

    events = LedgerEvent.objects.count()
    versions = Memory.objects.count()
    page.reload()
    expect(page.locator("h1")).to_have_text("Republish wider: 2 of 2 done")
    page.go_back()  # the review: a GET, shown again without running anything
    page.go_forward()
    expect(page.locator("h1")).to_have_text("Republish wider: 2 of 2 done")
    assert page.url == report_url
    assert LedgerEvent.objects.count() == events and Memory.objects.count() == versions
    assert AccessLog.objects.filter(action="bulk").count() == 1
    assert LedgerEvent.objects.filter(kind="memory.promoted").count() == 2
    assert all(Memory.objects.get(pk=m.pk).retired_at is None for m in chosen)


def _sideways(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth - window.innerWidth")


def test_the_bulk_pages_fit_a_narrow_window(page, org, users):
    for n in range(3):
        writes.publish(org.acme, f"long-{n}", "x" * 200, principal=users.p_owner)
    log_in(page, "owner", "pw-owner-123")
    page.set_viewport_size({"width": 390, "height": 800})
    page.goto("/memories/")
    assert _sideways(page) <= 0, "finder"
    page.select_option("#bulk-form select[name=action]", "pin")
    page.get_by_role("button", name="Review all on this page…").click()
    expect(page.locator("#bulk-confirm")).to_be_visible()
    assert _sideways(page) <= 0, "review"
    page.click("#bulk-confirm button[type=submit]")
    expect(page.locator("#bulk-outcomes")).to_be_visible()
    assert _sideways(page) <= 0, "report"
    page.get_by_role("link", name="Review the undo…").click()
    expect(page.locator("#undo-steps")).to_be_visible()
    assert _sideways(page) <= 0, "undo"
