"""The memory page's runs pager in a real browser: htmx swaps only that section, the
address bar follows, and the page is not reloaded."""

import re

import pytest
from playwright.sync_api import expect

from memory_console.console.memories.reads import PAGE_ROWS
from memory_core import turns, writes
from tests.browser import log_in

pytestmark = pytest.mark.browser


def test_the_runs_pager_swaps_its_section_in_place(page, org, users):
    memory = writes.remember(org.u1, "tz", "works in CET", principal=org.acme_agent).memory
    for n in range(PAGE_ROWS + 5):
        turns.resolve_turn(org.u1, f"run-{n:03}", principal=org.acme_agent)
    log_in(page, "auditor", "pw-audit-123")
    page.goto(f"/memories/{memory.uid}/")
    runs = page.locator("#memory-runs")
    expect(runs.locator("tbody tr")).to_have_count(PAGE_ROWS)
    expect(runs.locator("h2")).to_contain_text(f"{PAGE_ROWS + 5} prompt lines")
    page.evaluate("window.__sameDocument = 'yes'")
    access_first = page.locator("#memory-access tbody tr").first.inner_text()

    runs.locator("a[rel=next]").click()
    expect(runs.locator("tbody tr")).to_have_count(5)
    expect(runs.locator("tbody tr").first).to_contain_text("run-004")
    expect(page).to_have_url(re.compile(r"runs_before=\d+"))
    assert page.evaluate("window.__sameDocument") == "yes"
    assert page.locator("#memory-access tbody tr").first.inner_text() == access_first

    runs.locator("a[rel=prev]").click()
    expect(runs.locator("tbody tr")).to_have_count(PAGE_ROWS)
