"""Undo in a real browser: invalidate, then reinstate, then revert, all swapped in place."""

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from memory_core import writes
from memory_core.models import LedgerEvent, Memory
from tests.browser import log_in

pytestmark = pytest.mark.browser

AXE = (Path(__file__).parent / "vendor" / "axe.min.js").read_text(encoding="utf-8")


def _serious_axe_violations(page) -> list[str]:
    """axe-core's serious and critical findings on the page (run with page.evaluate, which
    the console's Content-Security-Policy does not apply to)."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(AXE)
    found = page.evaluate(
        """async () => (await axe.run(document, {resultTypes: ["violations"]})).violations
            .filter((v) => ["serious", "critical"].includes(v.impact)).map((v) => v.id)"""
    )
    return [f"{page.url}: {v}" for v in found]


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


def test_undo_this_bulk_from_its_report(page, org, users):
    chosen = [
        writes.remember(
            actor, "timezone", f"{actor.ref} works in CET", principal=org.acme_agent
        ).memory
        for actor in (org.u1, org.u2)
    ]
    log_in(page, "owner", "pw-owner-123")
    page.goto("/memories/?q=CET")
    page.locator("#finder-rows").filter(has_text="2 memories match").wait_for()
    page.select_option("#bulk-form select[name=action]", "invalidate")
    page.get_by_role("button", name="Review every match (up to 200)…").click()
    page.fill("#bulk-reason", "checking with the team")
    page.click("#bulk-confirm button[type=submit]")
    expect(page.locator("h1")).to_have_text("Invalidate: 2 of 2 done")
    bulk_url = page.url

    assert _serious_axe_violations(page) == []
    page.get_by_role("link", name="Review the undo…").click()
    expect(page.locator("#undo-steps tbody tr")).to_have_count(2)
    assert _serious_axe_violations(page) == []
    expect(page.locator("#undo-steps")).to_contain_text("acme/u1 works in CET")
    assert not LedgerEvent.objects.filter(kind="memory.reinstated").exists()
    page.get_by_role("button", name="Undo 2 changes").click()

    expect(page.locator("h1")).to_have_text("Undo: 2 of 2 done")
    expect(page.locator("#bulk-undoes")).to_contain_text("This bulk undid")
    events = LedgerEvent.objects.count()
    page.reload()
    expect(page.locator("h1")).to_have_text("Undo: 2 of 2 done")
    assert LedgerEvent.objects.count() == events
    live = Memory.objects.live().filter(key="timezone")
    assert live.count() == 2 and {m.author for m in live} == {"agent"}
    assert {m.supersedes_id for m in live} == {m.pk for m in chosen}

    page.goto(bulk_url)
    expect(page.locator("#bulk-undone-by")).to_contain_text("Undone by")
    expect(page.get_by_role("link", name="Review the undo…")).to_have_count(0)
