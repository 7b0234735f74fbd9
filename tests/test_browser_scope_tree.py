"""The scopes page's lazy tree in a real browser: ▸ opens a tenant in place with htmx (no
navigation, no CSP violation), and the same link works as a plain page load."""

import pytest
from playwright.sync_api import expect

from tests.browser import log_in, screenshot
from tests.test_browser_csp import Violations

pytestmark = pytest.mark.browser


def test_a_tenant_opens_in_place_with_htmx(page, org, users):
    violations = Violations(page)
    log_in(page, "root", "pw-root-123")
    page.goto("/scopes/")
    rows = page.locator("#scope-rows")
    expect(rows.locator('a[href="/scopes/tenant:acme/"]')).to_be_visible()
    expect(rows.locator('a[href="/scopes/team:acme/ops/"]')).to_have_count(0)
    page.locator('a.tree-toggle[hx-get="/scopes/?open=tenant%3Aacme"]').click()
    expect(rows.locator('a[href="/scopes/team:acme/ops/"]')).to_be_visible()
    expect(rows.locator('a[href="/scopes/actor:acme/u1/"]')).to_be_visible()
    assert page.url.endswith("/scopes/")  # swapped in place, not navigated
    expect(rows.locator('a[href="/scopes/actor:globex/x9/"]')).to_have_count(0)
    violations.check("opened with htmx")
    screenshot(page, "console-scopes-tree.png")


def test_the_same_link_without_javascript_opens_the_page(browser, live_server, org, users):
    context = browser.new_context(base_url=live_server.url, java_script_enabled=False)
    page = context.new_page()
    log_in(page, "root", "pw-root-123")
    page.goto("/scopes/")
    page.locator('a.tree-toggle[href^="/scopes/?open=tenant%3Aacme"]').click()
    page.wait_for_url("**/scopes/?open=tenant%3Aacme*")
    expect(page.locator('a[href="/scopes/team:acme/ops/"]')).to_be_visible()
    context.close()
