"""The key and user lifecycles in a real browser: every step a click, no JavaScript needed
for the confirmations."""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from memory_core.accounts import keys
from memory_core.models import ApiKey, ScopeGrant
from tests.browser import log_in, screenshot

pytestmark = pytest.mark.browser


def test_an_owner_pauses_resumes_and_revokes_a_key(page, org, users):
    log_in(page, "owner", "pw-owner-123")
    page.goto("/keys/")
    row = page.locator(f"#key-{org.acme_key.uid}")
    assert row.locator(".state").text_content() == "live"
    row.locator("button", has_text="Pause").click()
    page.wait_for_load_state()
    assert "Paused the key acme host" in page.inner_text("body")
    assert page.locator(f"#key-{org.acme_key.uid} .state").text_content() == "paused"
    assert keys.authenticate(org.acme_secret) is None
    screenshot(page, "console-keys.png")

    page.locator(f"#key-{org.acme_key.uid} button", has_text="Resume").click()
    page.wait_for_load_state()
    assert page.locator(f"#key-{org.acme_key.uid} .state").text_content() == "live"
    assert keys.authenticate(org.acme_secret) == org.acme_key

    row = page.locator(f"#key-{org.acme_key.uid}")
    row.locator("summary", has_text="Revoke").click()
    row.locator("button", has_text="Revoke this key").click()
    page.wait_for_load_state()
    assert page.locator(f"#key-{org.acme_key.uid} .state").text_content() == "revoked"
    assert page.locator(f"#key-{org.acme_key.uid} button").count() == 0


def test_an_owner_creates_a_key_that_expires(page, org, users):
    day = (timezone.localdate() + timedelta(days=10)).isoformat()
    log_in(page, "owner", "pw-owner-123")
    page.goto("/keys/")
    page.fill("#key-name", "short-lived")
    page.select_option("#key-reach", "tenant:acme")
    page.fill("#key-expires", day)
    page.click("#create button[type=submit]")
    page.wait_for_load_state()
    key = ApiKey.objects.get(name="short-lived")
    assert timezone.localtime(key.expires_at).date().isoformat() == day
    assert day in page.locator(f"#key-{key.uid}").inner_text()


def test_an_owner_creates_a_key_bound_to_an_actor(page, org, users):
    log_in(page, "owner", "pw-owner-123")
    page.goto("/keys/")
    page.fill("#key-name", "u1's desk")
    page.select_option("#key-reach", "tenant:acme")
    page.fill("#key-actor", "u1")
    page.click("#create button[type=submit]")
    page.wait_for_load_state()
    key = ApiKey.objects.get(name="u1's desk")
    assert key.actor == org.u1
    assert "acts for the actor acme/u1 alone" in page.locator("#new-key").inner_text()
    assert "bound to acme/u1" in page.locator(f"#key-{key.uid}").inner_text()


def test_a_superuser_searches_deactivates_and_reactivates_a_user(page, org, users):
    log_in(page, "root", "pw-root-123")
    page.goto("/users/")
    page.fill("input[name=q]", "own")
    page.click("form[role=search] button[type=submit]")
    page.locator("#user-rows .count", has_text="1 user matches").wait_for()
    assert page.locator("#user-auditor").count() == 0

    row = page.locator("#user-owner")
    confirm = row.locator("details.confirm", has=page.locator("summary", has_text="Deactivate"))
    assert not confirm.locator("button", has_text="Deactivate owner").is_visible()
    confirm.locator("summary").click()
    confirm.locator("button", has_text="Deactivate owner").click()
    page.wait_for_load_state()
    assert "Deactivated owner" in page.inner_text("body")
    assert not get_user_model().objects.get(username="owner").is_active
    page.locator("#user-owner button", has_text="Reactivate").click()
    page.wait_for_load_state()
    assert get_user_model().objects.get(username="owner").is_active


def test_a_superuser_sets_a_new_password_and_revokes_a_grant_after_confirming(page, org, users):
    log_in(page, "root", "pw-root-123")
    page.goto("/users/")
    row = page.locator("#user-owner")
    row.locator("summary", has_text="New password").click()
    row.locator("input[name=password1]").fill("fresh-Pw-91-long!")
    row.locator("input[name=password2]").fill("fresh-Pw-91-long!")
    row.locator("button", has_text="Set password").click()
    page.wait_for_load_state()
    assert "Set a new password for owner" in page.inner_text("body")
    assert get_user_model().objects.get(username="owner").check_password("fresh-Pw-91-long!")

    row = page.locator("#user-owner")
    confirm = row.locator("details.confirm.inline")
    assert not confirm.locator("button", has_text="Revoke this grant").is_visible()
    confirm.locator("summary").click()
    screenshot(page, "console-users.png")
    confirm.locator("button", has_text="Revoke this grant").click()
    page.wait_for_load_state()
    assert "owner is no longer admin of tenant:acme" in page.inner_text("body")
    assert not ScopeGrant.objects.filter(user=users.owner).exists()
