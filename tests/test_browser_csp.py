"""The console under its Content-Security-Policy in a real browser: no page and no htmx
action may trip it. A violation shows as a `securitypolicyviolation` event in the page
and as a console error; both are collected, and any one fails the test."""

import re

import pytest
from playwright.sync_api import expect

from memory_core import turns, writes
from tests.browser import log_in

pytestmark = pytest.mark.browser

# Registered before any page script runs; survives every navigation of the context.
LISTEN = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  const where = `${event.sourceFile}:${event.lineNumber}`;
  const what = `${event.violatedDirective} ${event.blockedURI || "inline"}`;
  window.__cspViolations.push(`${what} ${where}`);
});
"""


class Violations:
    def __init__(self, page):
        self.page = page
        self.console = []
        page.add_init_script(LISTEN)
        page.on("console", self._console)

    def _console(self, message):
        text = message.text
        if message.type == "error" and ("Content Security Policy" in text or "CSP" in text):
            self.console.append(text)

    def check(self, where: str) -> None:
        seen = self.page.evaluate("window.__cspViolations || []")
        assert not seen and not self.console, (where, seen, self.console)


def test_pages_and_htmx_actions_trip_no_csp_violation(page, org, users):
    memory = writes.publish(org.acme, "fiscal-year", "starts in October", principal=users.p_owner)
    learned = writes.remember(org.u1, "tz", "works in CET", principal=org.acme_agent).memory
    turns.resolve_turn(org.u1, "run-1", principal=org.acme_agent)
    brief = writes.remember(org.u1, "tone", "brief", principal=org.acme_agent).memory
    formal = writes.publish(org.acme, "tone", "formal", principal=users.p_owner)
    violations = Violations(page)
    log_in(page, "root", "pw-root-123")
    violations.check("login")
    for path in [
        "/",
        "/scopes/",
        "/scopes/tenant:acme/",
        f"/memories/{memory.uid}/",
        "/memories/?q=fiscal",
        "/actors/",
        "/actors/acme/u1/",
        "/conflicts/",
        "/ledger/",
        "/access/",
        "/runs/",
        "/runs/acme/u1/run-1/",
        "/threads/",
        "/attribution/",
        "/keys/",
        "/users/",
    ]:
        page.goto(path)
        page.wait_for_load_state("load")
        violations.check(path)

    # htmx actions: pin, unpin and a refused invalidate swap #memory-content in place.
    page.goto(f"/memories/{memory.uid}/")
    page.click("#pin button[type=submit]")
    expect(page.locator("#memory-content ul.flash")).to_have_text("Pinned: always in the prompt.")
    page.click("#pin button[type=submit]")
    expect(page.locator("#memory-content ul.flash")).to_have_text("Unpinned.")
    page.fill("#invalidate-reason", "   ")
    page.click("#invalidate button[type=submit]")
    expect(page.locator("#memory-content ul.flash[role=alert]")).to_be_visible()
    violations.check("htmx actions on the memory page")

    # A correction (htmx POST; the address bar follows), a scope filter (htmx GET with
    # hx-push-url) and the ledger's verify button.
    page.goto(f"/memories/{learned.uid}/")
    page.fill("#correct-text", "works in CEST")
    page.click("#correct button[type=submit]")
    expect(page.locator("#memory-content ul.flash")).to_contain_text("is the live version")
    violations.check("correct")
    page.goto("/scopes/tenant:acme/")
    page.select_option("select[name=pinned]", "no")
    expect(page).to_have_url(re.compile(r"pinned=no"))
    violations.check("scope filter")
    page.goto("/ledger/")
    page.click("text=Verify chain")
    expect(page.locator("#main")).to_contain_text("ok:")
    violations.check("ledger verify")

    # The actor page's block preview, and a conflicts row's inline decision.
    page.goto("/actors/acme/u1/")
    page.fill("#block-preview input[name=q]", "timezone")
    page.press("#block-preview input[name=q]", "Enter")
    expect(page).to_have_url(re.compile(r"q=timezone"))
    violations.check("block preview")
    page.goto("/conflicts/")
    row = page.locator(f"#conflict-{brief.uid}-{formal.uid}")
    row.locator("summary").click()
    row.locator("input[name=reason]").fill("too curt")
    row.locator("text=Invalidate it").click()
    expect(page.locator("#main")).to_contain_text("Invalidated")
    violations.check("conflict invalidate")


def test_ids_in_narrow_columns_stay_on_one_line(page, org, users):
    first = writes.publish(org.acme, "k", "one", principal=users.p_owner)
    writes.correct(first, "two", principal=users.p_owner)
    log_in(page, "root", "pw-root-123")
    for width, path in [(480, "/ledger/"), (480, "/"), (480, f"/memories/{first.uid}/")]:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(path)
        # An inline element broken over two lines has two client rects.
        lines = page.eval_on_selector_all(
            "code.id, td.uid a, td.uid strong",
            "els => els.map(e => [e.textContent, e.getClientRects().length])",
        )
        assert any(text.startswith("mem_") for text, _ in lines), path
        assert all(boxes == 1 for _, boxes in lines), (path, lines)


def test_the_icon_is_served_where_browsers_look(page, users):
    icon = page.goto("/favicon.ico")
    assert icon.ok and icon.url.endswith("/static/img/favicon.svg")
    assert "svg" in icon.headers["content-type"]
    page.goto("/login/")
    assert page.locator('link[rel="icon"]').get_attribute("href") == "/static/img/favicon.svg"
