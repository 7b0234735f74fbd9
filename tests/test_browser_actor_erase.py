"""Erasing a person from the actor page, in a real browser (htmx, strict CSP)."""

import pytest
from playwright.sync_api import expect

from memory_core import transcripts, turns, writes
from memory_core.accounts import keys
from memory_core.models import ApiKey, Digest, LedgerEvent, Memory, Message
from tests.browser import log_in, screenshot

pytestmark = pytest.mark.browser

FACT = "u1 is allergic to quinine"


@pytest.fixture
def history(org, operator):
    agent = org.acme_agent
    transcripts.record_message(org.u1, "t-1", "user", "I am allergic to quinine", principal=agent)
    writes.remember(org.u1, "health", FACT, principal=agent, run_id="r-1", thread_id="t-1")
    turns.resolve_turn(org.u1, "r-2", principal=agent, query="what am I allergic to")
    keys.create_api_key("u1 desktop", org.acme, principal=operator, actor_ref="u1")


def test_a_wrong_ref_is_refused_inside_the_section_and_erases_nothing(page, org, users, history):
    log_in(page, "owner", "pw-owner-123")
    page.goto("/actors/acme/u1/")
    page.evaluate("window.__sameDocument = 'yes'")
    page.fill("#erase-ref", "u1")
    page.click("#erase button[type=submit]")
    expect(page.locator("#erase p.error")).to_contain_text("nothing was erased")
    assert page.evaluate("window.__sameDocument") == "yes"
    assert Memory.objects.filter(scope=org.u1.scope, text=FACT).exists()
    assert not LedgerEvent.objects.filter(kind="actor.erased").exists()


def test_erasing_a_person_through_the_typed_confirmation_reports_what_was_removed(
    page, org, users, history
):
    log_in(page, "owner", "pw-owner-123")
    page.goto("/actors/acme/u1/")
    expect(page.locator("#applies")).to_contain_text(FACT)
    expect(page.locator("#erase")).to_contain_text("What an erasure leaves")
    page.fill("#erase-ref", "acme/u1")
    page.click("#erase button[type=submit]")
    report = page.locator("ul.flash .flash-success")
    expect(report).to_contain_text("Erased acme/u1: 1 memory forgotten (1 version)")
    expect(report).to_contain_text("1 bound API key revoked")
    assert page.url.endswith("/actors/acme/u1/")
    expect(page.locator("#applies")).not_to_contain_text(FACT)
    assert "quinine" not in page.inner_text("body")
    screenshot(page, "console-actor-erased.png")
    assert not Memory.objects.filter(scope=org.u1.scope).exists()
    assert not Message.objects.filter(thread__actor=org.u1).exists()
    assert Digest.objects.get(actor=org.u1, run_id="r-2").query is None
    assert not ApiKey.objects.filter(actor=org.u1, revoked_at__isnull=True).exists()
    assert LedgerEvent.objects.get(kind="actor.erased").principal == "user:owner"
