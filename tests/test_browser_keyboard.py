"""The console with a keyboard alone: the first Tab reaches "Skip to content", which moves
focus to the page's main content; and focus stays in what an htmx swap brought in (the
scope tree, the block preview, a memory's actions) instead of dropping to <body>, where
the next Tab would start again from the top of the page."""

import re

import pytest
from playwright.sync_api import expect

from memory_core import writes
from memory_core.models import Memory
from tests.browser import log_in
from tests.test_browser_csp import Violations

pytestmark = pytest.mark.browser

# Where focus is: enough to tell <body> from an element inside the swapped content.
FOCUS = """
() => {
  const el = document.activeElement;
  if (!el || el === document.body) return {tag: "BODY", path: []};
  const path = [];
  for (let up = el; up; up = up.parentElement) if (up.id) path.push(up.id);
  return {tag: el.tagName, expanded: el.getAttribute("aria-expanded"), path};
}
"""


def focus(page) -> dict:
    return page.evaluate(FOCUS)


def test_the_first_tab_reaches_skip_to_content_which_moves_focus_to_main(page, org, users):
    log_in(page, "root", "pw-root-123")
    page.goto("/scopes/")
    page.keyboard.press("Tab")
    skip = page.locator("a.skip-link")
    expect(skip).to_be_focused()
    expect(skip).to_have_text("Skip to content")
    box = skip.bounding_box()
    assert box and box["y"] >= 0 and box["x"] >= 0  # shown while it has focus
    page.keyboard.press("Enter")
    expect(page.locator("main#main")).to_be_focused()
    # The next Tab goes on from the content, past the menu.
    page.keyboard.press("Tab")
    assert "main" in focus(page)["path"]


def test_opening_a_scope_with_the_keyboard_keeps_focus_on_its_toggle(page, org, users):
    violations = Violations(page)
    log_in(page, "root", "pw-root-123")
    page.goto("/scopes/")
    page.locator('a.tree-toggle[hx-get="/scopes/?open=tenant%3Aacme"]').focus()
    page.keyboard.press("Enter")
    expect(page.locator('#scope-rows a[href="/scopes/team:acme/ops/"]')).to_be_visible()
    assert page.url.endswith("/scopes/")  # swapped in place
    # The rows are in before htmx settles the swap; focus is placed once it has.
    page.wait_for_function("document.activeElement && document.activeElement !== document.body")
    now = focus(page)
    assert now["tag"] != "BODY"
    assert f"scope-row-{org.acme.id}" in now["path"] and now["expanded"] == "true", now
    violations.check("focus after the tree opened")


def test_a_block_preview_from_the_keyboard_leaves_focus_in_the_query(page, org, users):
    writes.publish(org.acme, "tz", "works in CET", principal=users.p_owner)
    log_in(page, "owner", "pw-owner-123")
    page.goto("/actors/acme/u1/")
    query = page.locator("#block-preview input[name=q]")
    query.focus()
    page.keyboard.type("timezone")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"q=timezone"))
    expect(page.locator("#block-preview input[name=q]")).to_be_focused()
    assert "block-preview" in focus(page)["path"]


def test_pinning_from_the_keyboard_puts_focus_on_the_result(page, org, users):
    memory = writes.publish(org.acme, "fiscal-year", "starts in October", principal=users.p_owner)
    log_in(page, "owner", "pw-owner-123")
    page.goto(f"/memories/{memory.uid}/")
    page.locator("#pin button[type=submit]").focus()
    page.keyboard.press("Enter")
    notice = page.locator("#memory-content ul.flash")
    expect(notice).to_have_text("Pinned: always in the prompt.")
    expect(notice).to_be_focused()
    assert Memory.objects.get(uid=memory.uid).pinned
    # Tab goes on from the result, not from the top of the page.
    page.keyboard.press("Tab")
    assert "memory-content" in focus(page)["path"]
