"""The Content-Security-Policy in a real browser (Playwright driving Debian's Chromium): the
console and the API docs load with no violation reported, htmx swaps still work under the
policy, and no other site can frame the console."""

import re
import time

import pytest
from playwright.sync_api import expect

from memory_core import transcripts, turns, writes
from memory_core.ledger import access_log
from tests.browser import log_in

pytestmark = pytest.mark.browser

# Every violation is reported twice over: a console message from Chromium, and a
# securitypolicyviolation event, collected by a script the page's policy does not govern.
COLLECT_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", function (event) {
  window.__violations.push(event.violatedDirective + " " + (event.blockedURI || "inline"));
});
"""


class CspWatch:
    def __init__(self, page):
        self.page = page
        self.messages = []
        page.on("console", self._console)
        page.add_init_script(COLLECT_VIOLATIONS)

    def _console(self, message):
        if "Content Security Policy" in message.text:
            self.messages.append(f"{self.page.url}: {message.text}")

    def violations(self) -> list[str]:
        events = self.page.evaluate("window.__violations || []")
        return self.messages + [f"{self.page.url}: {event}" for event in events]


def eventually(check, timeout: float = 10.0):
    """Poll `check` from Python. (page.wait_for_function evaluates its predicate with eval()
    in the page, which this very policy forbids.)"""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


@pytest.fixture
def watched(page):
    return page, CspWatch(page)


@pytest.fixture
def content(org, users):
    writes.publish(org.acme, "units", "report distances in kilometres", principal=users.p_owner)
    note = writes.remember(
        org.u1, "units", "they prefer miles", principal=org.acme_agent, thread_id="t1"
    ).memory
    writes.remember(org.u2, "tz", "works in CET", principal=org.acme_agent)
    transcripts.record_message(org.u1, "t1", "user", "I like miles", principal=org.acme_agent)
    turns.resolve_turn(org.u1, "run-1", principal=org.acme_agent, thread_id="t1")
    turns.resolve_turn(org.u2, "run-2", principal=org.acme_agent)
    access_log.record(org.globex_agent, "remember", 404, actor_ref="acme/u1")
    return note


def test_console_pages_load_with_no_csp_violation(watched, content):
    page, watch = watched
    response = page.goto("/login/")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    log_in(page, "root", "pw-root-123")
    paths = [
        "/",
        "/scopes/",
        "/scopes/tenant:acme/",
        f"/memories/{content.uid}/",
        "/actors/acme/u1/",
        "/conflicts/",
        "/ledger/",
        "/access/",
        "/attribution/",
        "/runs/",
        "/runs/acme/u1/run-1/",
        "/threads/t1/",
        "/keys/",
        "/users/",
        "/memories/mem_00000000000000000000000000/",  # the error page
    ]
    for path in paths:
        response = page.goto(path)
        assert response.headers.get("content-security-policy"), path
        page.wait_for_load_state("networkidle")
        assert watch.violations() == [], path
    # The ledger's live view ran its script (live-poll.js) under the policy.
    page.goto("/ledger/")
    page.wait_for_selector("[data-live]:not([hidden])")
    assert watch.violations() == []


def test_htmx_filter_swaps_work_under_the_policy(watched, content):
    page, watch = watched
    log_in(page, "owner", "pw-owner-123")
    page.goto("/runs/")
    page.evaluate("window.notReloaded = true")
    assert "2 runs" in page.inner_text("#run-rows .count")
    page.fill("form.filters input[name=actor]", "acme/u1")
    page.click("form.filters button[type=submit]")
    expect(page.locator("#run-rows .count")).to_contain_text("of actor acme/u1")
    assert page.evaluate("window.notReloaded") is True  # swapped in place, no navigation
    assert "actor=acme%2Fu1" in page.url  # hx-push-url
    assert "1 run of actor acme/u1" in page.inner_text("#run-rows .count")

    page.goto("/access/")
    page.evaluate("window.notReloaded = true")
    page.check("input[name=refused]")  # hx-trigger="change"
    expect(page).to_have_url(re.compile(r"refused=on"))
    expect(page.locator("#access-rows tbody tr")).to_have_count(1)
    assert page.evaluate("window.notReloaded") is True
    assert watch.violations() == []


def test_the_api_docs_render_under_the_same_policy(watched, org):
    page, watch = watched
    response = page.goto("/api/v1/docs")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    page.wait_for_selector(".opblock")  # Swagger UI drew the operations from openapi.json
    assert page.locator(".opblock").count() >= 8
    page.locator(".opblock-summary").first.click()
    page.wait_for_selector(".opblock-body")
    assert watch.violations() == []


def test_the_watch_does_see_a_violation(watched, org):
    """The detector itself: an inline style attribute and handler are refused and reported."""
    page, watch = watched
    page.goto("/login/")
    hostile = '<p id="styled" style="color: red">x</p><img src="/x" onerror="window.ran = 1">'
    page.evaluate("html => document.body.insertAdjacentHTML('beforeend', html)", hostile)

    def both_reported():
        found = watch.violations()
        return any("style-src" in v for v in found) and any("script-src" in v for v in found)

    # The style is refused as the element is parsed, the handler only once /x has failed
    # to load: wait for both, not merely for two reports.
    eventually(both_reported)
    assert page.evaluate("window.ran") is None
    assert page.evaluate("getComputedStyle(document.getElementById('styled')).color") != (
        "rgb(255, 0, 0)"
    )
    assert both_reported()


def test_another_site_cannot_frame_the_console(watched, live_server, users):
    page, watch = watched
    page.set_content(f'<iframe id="victim" src="{live_server.url}/login/"></iframe>')
    page.wait_for_timeout(1500)
    frame = page.frame_locator("#victim")
    assert frame.locator("input[name=password]").count() == 0
