"""The console in a real browser (Playwright driving Debian's Chromium)."""

import pytest

from memory_core import turns, writes
from memory_core.models import Memory
from tests.browser import log_in, screenshot

pytestmark = pytest.mark.browser


def test_forget_through_the_typed_confirmation_erases_every_version(page, org, users):
    first = writes.remember(org.u1, "tz", "works in CET", principal=org.acme_agent).memory
    latest = writes.remember(org.u1, "tz", "works in CET, mornings", principal=org.acme_agent)
    turns.resolve_turn(org.u1, "run-1", principal=org.acme_agent)
    log_in(page, "owner", "pw-owner-123")
    page.goto(f"/memories/{latest.memory.uid}/")
    assert "every version" in page.inner_text("#forget")
    page.fill("#forget-key", "tz")
    page.click("#forget button[type=submit]")
    page.wait_for_url("**/scopes/actor:acme/u1/")
    assert "Forgotten: 2 versions erased" in page.inner_text("body")
    assert not Memory.objects.filter(lineage=first.lineage).exists()


def test_a_script_in_memory_text_shows_as_text_and_runs_nothing(page, org, users):
    hostile = "<script>window.pwned = 1</script><img src=x onerror=window.pwned=2>"
    memory = writes.publish(org.acme, "hostile", hostile, principal=users.p_owner)
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    log_in(page, "owner", "pw-owner-123")
    for url in ("/scopes/tenant:acme/", f"/memories/{memory.uid}/"):
        page.goto(url)
        assert hostile in page.inner_text("body")
        assert page.evaluate("window.pwned") is None
    assert dialogs == []


def test_a_post_without_the_csrf_token_is_refused(page, org, users):
    log_in(page, "owner", "pw-owner-123")
    response = page.request.post(
        "/scopes/tenant:acme/publish/", form={"key": "units", "text": "miles"}
    )
    assert response.status == 403
    assert not Memory.objects.filter(key="units").exists()


def test_publishing_from_the_scope_page_lands_in_the_list(page, org, users):
    log_in(page, "owner", "pw-owner-123")
    page.goto("/scopes/tenant:acme/")
    screenshot(page, "console-scope.png")
    page.fill("form[action$='/publish/'] [name=key]", "units")
    page.fill("form[action$='/publish/'] [name=text]", "report distances in kilometres")
    page.click("form[action$='/publish/'] button[type=submit]")
    page.wait_for_load_state()
    assert "report distances in kilometres" in page.inner_text("body")
    assert Memory.objects.live().get(key="units").origin_user == "owner"


def test_republishing_a_conflicting_conclusion_changes_the_actors_block(page, org, users):
    writes.publish(org.acme, "units", "report distances in kilometres", principal=users.p_owner)
    writes.remember(org.u1, "units", "they prefer miles", principal=org.acme_agent)
    log_in(page, "owner", "pw-owner-123")

    page.goto("/actors/acme/u1/")
    before = page.inner_text("#block-preview pre.block")
    assert "- [actor:acme/u1] units: they prefer miles" in before
    assert "↳ [tenant:acme] a person stated: report distances in kilometres" in before

    page.goto("/conflicts/")
    row = page.locator("tr", has_text="they prefer miles").first
    row.locator("summary", has_text="Decide").click()
    screenshot(page, "console-conflicts-decide.png")
    form = row.locator("form[action$='/republish/']")
    form.locator("input[name=retire_original]").check()
    form.locator("button[type=submit]").click()
    # htmx replaces the row with its result, without leaving the page.
    page.locator("tr.done", has_text="Republished at tenant:acme").wait_for()

    page.goto("/actors/acme/u1/")
    after = page.inner_text("#block-preview pre.block")
    assert after != before
    assert "- [tenant:acme] units: they prefer miles" in after
    assert "[actor:acme/u1] units" not in after
    screenshot(page, "console-actor.png")
    promoted = Memory.objects.live().get(scope=org.acme, key="units")
    assert promoted.author == "human" and promoted.promoted_from.scope == org.u1.scope
