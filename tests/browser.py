"""Driving Debian's Chromium with Playwright (never a downloaded browser).

Outside CI, when no `chromium` is installed, browser tests skip with the reason; under
CI=true they must run, so a missing browser fails them instead.
"""

import os
import shutil

import pytest

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = os.path.join(os.path.dirname(os.path.dirname(__file__)), "docs")


def chromium_path() -> str:
    path = shutil.which("chromium")
    if path is None:
        reason = "Debian's chromium is not installed (apt-get install -y chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason + "; CI must run the browser tests")
        pytest.skip(reason)
    return path


@pytest.fixture(scope="session")
def browser():
    executable = chromium_path()
    # Playwright's sync API runs an event loop in this thread; the test's own database calls
    # (fixtures, assertions) are still plain synchronous code.
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        yield instance
        instance.close()


@pytest.fixture
def page(browser, live_server):
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


def log_in(page, username: str, password: str) -> None:
    page.goto("/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_load_state()


def screenshot(page, name: str) -> None:
    """Save a screenshot for the README (docs/) when SCREENSHOTS=1."""
    if os.environ.get("SCREENSHOTS") == "1":
        page.screenshot(path=os.path.join(SCREENSHOTS, name), full_page=True)
