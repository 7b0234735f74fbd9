"""Gardening in a real browser: a pass proposes a promotion, an administrator approves it."""

import re

import pytest
from playwright.sync_api import expect

from memory_core import actors, writes
from memory_core.garden import passes
from memory_core.models import LedgerEvent, Memory, Proposal
from tests.browser import log_in, screenshot

pytestmark = pytest.mark.browser


@pytest.fixture(autouse=True)
def thresholds(settings):
    settings.GARDEN_MIN_ACTORS = 3
    settings.MEMORY_EMBEDDER = "none"


def test_an_administrator_approves_a_promotion(page, org, users):
    team = [org.u1] + [
        actors.put_actor(r, r, ["team:acme/ops", "tenant:acme"], org.acme_key, org.acme_agent)
        for r in ("u3", "u4")
    ]
    for actor in team:
        writes.remember(actor, "tz", "Works in the Berlin time zone", principal=org.acme_agent)
    passes.run_pass()
    proposal = Proposal.objects.get(kind="promote", scope=org.ops)

    log_in(page, "owner", "pw-owner-123")
    page.goto("/")
    expect(page.locator("#chart-garden")).to_be_visible()
    page.click("nav.mainnav >> text=Garden")
    expect(page).to_have_url(re.compile("/garden/$"))
    card = page.locator(f"#proposal-{proposal.uid}")
    expect(card).to_contain_text("Works in the Berlin time zone")
    screenshot(page, "console-garden.png")
    card.locator(f"a[href='/garden/{proposal.uid}/']").click()

    page.check(f"#approve-{proposal.uid} input[name=retire_copies]")
    page.click(f"#approve-{proposal.uid} button[type=submit]")
    expect(page.locator("ul.flash, .flash-success").first).to_contain_text("Approved")
    expect(page.locator("#proposal-state")).to_have_text("approved")

    published = Memory.objects.get(scope=org.ops, key="tz", retired_at=None)
    assert published.author == "human"
    assert Memory.objects.filter(scope__token__startswith="actor:", retired_at=None).count() == 0
    assert LedgerEvent.objects.get(kind="proposal.approved").payload["proposal"] == proposal.uid


def test_approving_over_a_persons_value_needs_the_replace_choice(page, org, users, operator):
    from django.contrib.auth import get_user_model

    from memory_core.accounts.grants import grant
    from memory_core.accounts.principals import Principal

    get_user_model().objects.create_user("alice", "al@x.test", "pw-alice-123")
    grant("alice", org.acme, "admin", principal=operator)
    alice = Principal.for_user(get_user_model().objects.get(username="alice"))
    writes.publish(
        org.acme, "currency", "quote prices in US dollars", principal=alice, tags=["finance"]
    )
    team = [
        actors.put_actor(r, r, ["team:acme/ops", "tenant:acme"], org.acme_key, org.acme_agent)
        for r in ("u3", "u4")
    ]
    for actor in (org.u1, org.u2, *team):
        writes.remember(actor, "currency", "quote prices in euros", principal=org.acme_agent)
    passes.run_pass()
    proposal = Proposal.objects.get(kind="promote", scope=org.acme)

    log_in(page, "owner", "pw-owner-123")
    page.goto(f"/garden/{proposal.uid}/")
    landing = page.locator(f"#landing-{proposal.uid}")
    expect(landing).to_contain_text("quote prices in US dollars")
    expect(landing).to_contain_text("alice")
    expect(landing).to_contain_text("finance")

    page.click(f"#approve-{proposal.uid} button[type=submit]")
    expect(page.locator(f"#approve-{proposal.uid} [role=alert]")).to_contain_text(
        "already holds a value"
    )
    expect(page.locator("#proposal-state")).to_have_text("open")
    assert Memory.objects.filter(scope=org.acme, key="currency").count() == 1

    page.check(f"#approve-{proposal.uid} input[name=replace]")
    page.click(f"#approve-{proposal.uid} button[type=submit]")
    expect(page.locator("#proposal-state")).to_have_text("approved")
    live = Memory.objects.get(scope=org.acme, key="currency", retired_at=None)
    assert live.text == "quote prices in euros" and live.tags == ["finance"]
