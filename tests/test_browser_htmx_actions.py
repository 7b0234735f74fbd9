"""Inline actions in a real browser: htmx swaps the result in, the page is never reloaded.

A marker set on `window` before the click survives only if no page load happened.
"""

import re

import pytest
from playwright.sync_api import expect

from memory_core import writes
from memory_core.models import Memory
from tests.browser import log_in, screenshot

pytestmark = pytest.mark.browser


def _mark(page) -> None:
    page.evaluate("window.__sameDocument = 'yes'")


def _still_same_document(page) -> bool:
    return page.evaluate("window.__sameDocument") == "yes"


def test_pinning_on_the_memory_page_swaps_the_state_in_place(page, org, users):
    memory = writes.publish(org.acme, "fiscal-year", "starts in October", principal=users.p_owner)
    log_in(page, "owner", "pw-owner-123")
    page.goto(f"/memories/{memory.uid}/")
    expect(page.locator("h1 .pin")).to_have_count(0)
    _mark(page)

    page.click("#pin button[type=submit]")
    notice = page.locator("#memory-content ul.flash")
    expect(notice).to_have_text("Pinned: always in the prompt.")
    expect(page.locator("h1 .pin")).to_have_text("pinned")
    expect(page.locator("#pin button[type=submit]")).to_have_text("Unpin")
    assert _still_same_document(page)
    assert page.url.endswith(f"/memories/{memory.uid}/")
    assert Memory.objects.get(pk=memory.pk).pinned
    screenshot(page, "console-memory-pinned.png")

    page.click("#pin button[type=submit]")
    expect(notice).to_have_text("Unpinned.")
    expect(page.locator("#pin button[type=submit]")).to_have_text("Pin")
    assert _still_same_document(page)
    assert not Memory.objects.get(pk=memory.pk).pinned


def test_a_refusal_shows_inside_the_swapped_content(page, org, users):
    memory = writes.publish(org.acme, "fiscal-year", "starts in October", principal=users.p_owner)
    log_in(page, "owner", "pw-owner-123")
    page.goto(f"/memories/{memory.uid}/")
    _mark(page)
    page.fill("#invalidate-reason", "   ")  # passes `required`, refused by the service
    page.click("#invalidate button[type=submit]")
    expect(page.locator("#memory-content ul.flash[role=alert]")).to_contain_text(
        "say why the memory is invalid"
    )
    expect(page.locator("#invalidate p.error")).to_have_text("say why the memory is invalid")
    assert _still_same_document(page)
    assert Memory.objects.get(pk=memory.pk).retired_at is None


def test_invalidating_a_conflict_inline_replaces_only_its_row(page, org, users, operator):
    brief = writes.remember(org.u1, "tone", "brief", principal=org.acme_agent).memory
    formal = writes.publish(org.acme, "tone", "formal", principal=users.p_owner)
    writes.publish(org.root, "units", "kilometres", principal=operator)
    writes.publish(org.acme, "units", "miles", principal=users.p_owner)
    log_in(page, "owner", "pw-owner-123")
    page.goto("/conflicts/")
    _mark(page)

    row = page.locator(f"#conflict-{brief.uid}-{formal.uid}")
    row.locator("summary", has_text="Decide").click()
    row.locator("input[name=reason]").fill("the team writes formally")
    row.locator("button", has_text="Invalidate it").click()

    expect(row).to_have_class(re.compile(r"\bdone\b"))
    expect(row.locator("ul.flash")).to_have_text("Invalidated: it no longer reaches any prompt.")
    expect(row.locator("a", has_text="Reload the list")).to_have_attribute("href", "/conflicts/")
    # The other conflict is untouched, and the page was not reloaded.
    expect(page.locator("#conflict-rows tbody tr", has_text="miles")).to_have_count(1)
    assert _still_same_document(page)
    assert page.url.endswith("/conflicts/")
    screenshot(page, "console-conflicts-done.png")
    invalidated = Memory.objects.get(pk=brief.pk)
    assert invalidated.retired_reason == "invalidated"
    assert invalidated.retired_note == "the team writes formally"


def test_republishing_on_the_memory_page_lands_on_the_new_memory(page, org, users):
    learned = writes.remember(org.u1, "tz", "works in CET", principal=org.acme_agent).memory
    log_in(page, "owner", "pw-owner-123")
    page.goto(f"/memories/{learned.uid}/")
    page.select_option("#republish-target", "tenant:acme")
    page.click("#republish button[type=submit]")
    page.wait_for_url(re.compile(r"/memories/(?!" + learned.uid + r")[^/]+/$"))
    new = Memory.objects.get(scope=org.acme, key="tz")
    assert page.url.endswith(f"/memories/{new.uid}/")
    assert f"Republished at tenant:acme as {new.uid}." in page.inner_text("ul.flash")


def test_an_ended_session_sends_the_action_to_the_login_page(page, org, users):
    memory = writes.publish(org.acme, "fiscal-year", "starts in October", principal=users.p_owner)
    log_in(page, "owner", "pw-owner-123")
    page.goto(f"/memories/{memory.uid}/")
    page.context.clear_cookies(name="sessionid")
    page.click("#pin button[type=submit]")
    page.wait_for_url(re.compile(rf"/login/\?next=/memories/{memory.uid}/$"))
    assert page.locator("#memory-content").count() == 0  # not nested in the old page
    assert not Memory.objects.get(pk=memory.pk).pinned
