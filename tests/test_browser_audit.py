"""The audit pages in a real browser (Playwright driving Debian's Chromium): the ledger's
live view, its pause and hidden-tab gating, the chain check, and the dashboard."""

import pytest
from playwright.sync_api import expect

from memory_console.console.ledger.views import POLL_SECONDS
from memory_core import turns, writes
from memory_core.errors import Forbidden
from memory_core.ledger import access_log
from memory_core.models import LedgerEvent
from tests.browser import log_in, screenshot

pytestmark = pytest.mark.browser

POLL_MS = POLL_SECONDS * 1000


def _event_of(memory) -> LedgerEvent:
    return LedgerEvent.objects.get(kind="memory.published", payload__memory=memory.uid)


def _open_live_ledger(page):
    log_in(page, "owner", "pw-owner-123")
    page.goto("/ledger/")
    # live-poll.js ran: the live box shows (it is hidden for a page without scripts).
    page.wait_for_selector("[data-live]:not([hidden])")


def _polls(page) -> list[str]:
    seen: list[str] = []
    page.on("request", lambda request: "/ledger/new/" in request.url and seen.append(request.url))
    return seen


def test_the_ledger_page_receives_a_new_event_without_reload(page, org, users):
    writes.publish(org.acme, "fiscal-year", "starts in October", principal=users.p_owner)
    writes.remember(org.u1, "tz", "works in CET", principal=org.acme_agent)
    _open_live_ledger(page)
    page.evaluate("window.notReloaded = true")

    memory = writes.publish(org.acme, "arrived", "published after loading", principal=users.p_owner)
    event = _event_of(memory)
    page.wait_for_selector(f"#event-{event.id}", timeout=POLL_MS * 3)

    assert page.evaluate("window.notReloaded") is True
    assert page.get_attribute("#ledger-body tr", "id") == f"event-{event.id}"  # newest on top
    assert "fresh" in page.get_attribute(f"#event-{event.id}", "class")
    assert page.locator(f"#ledger-body tr#event-{event.id}").count() == 1
    # The poller moved its cursor on: the next poll asks for events after this one.
    assert f"after={event.id}" in page.get_attribute("#ledger-poller", "hx-get")
    screenshot(page, "console-ledger.png")


def test_pausing_stops_the_polls_until_resumed(page, org, users):
    _open_live_ledger(page)
    polls = _polls(page)
    page.click("[data-live-toggle]")
    assert page.inner_text("[data-live-toggle]") == "Resume"
    assert "Paused" in page.inner_text("[data-live-state]")
    memory = writes.publish(org.acme, "quiet", "published while paused", principal=users.p_owner)
    event = _event_of(memory)
    page.wait_for_timeout(POLL_MS + 1500)
    assert polls == [] and page.locator(f"#event-{event.id}").count() == 0

    page.click("[data-live-toggle]")  # resuming polls at once
    page.wait_for_selector(f"#event-{event.id}", timeout=POLL_MS)
    assert page.get_attribute("[data-live-toggle]", "aria-pressed") == "false"


def test_a_hidden_tab_does_not_poll(page, org, users):
    _open_live_ledger(page)
    polls = _polls(page)
    page.evaluate(
        "Object.defineProperty(document, 'hidden', {value: true, configurable: true});"
        "document.dispatchEvent(new Event('visibilitychange'))"
    )
    memory = writes.publish(org.acme, "unseen", "published while hidden", principal=users.p_owner)
    page.wait_for_timeout(POLL_MS + 1500)
    assert polls == []
    page.evaluate(
        "Object.defineProperty(document, 'hidden', {value: false, configurable: true});"
        "document.dispatchEvent(new Event('visibilitychange'))"
    )
    page.wait_for_selector(f"#event-{_event_of(memory).id}", timeout=POLL_MS)


def test_verify_chain_shows_the_verdict_in_place(page, org, users):
    writes.publish(org.acme, "fiscal-year", "starts in October", principal=users.p_owner)
    _open_live_ledger(page)
    page.click("form.verify-form button[type=submit]")
    page.wait_for_selector("#chain-status .verdict-ok")
    count = LedgerEvent.objects.filter(stream="tenant:acme").count()
    assert page.inner_text("#chain-status .verdict") == f"ok: {count} events"


def test_the_dashboard_draws_its_charts_and_alerts(page, settings, org, users):
    settings.MEMORY_MAX_LINES = 2
    for i in range(3):
        writes.publish(
            org.acme, f"policy-{i}", f"standing policy {i}", principal=users.p_owner, pinned=True
        )
    writes.remember(org.u1, "tz", "works in CET", principal=org.acme_agent)
    writes.remember(org.u2, "lang", "prefers French", principal=org.acme_agent)
    turns.resolve_turn(org.u1, "run-1", principal=org.acme_agent)
    turns.resolve_turn(org.u2, "run-2", principal=org.acme_agent)
    log_in(page, "owner", "pw-owner-123")
    page.goto("/")
    assert page.locator("#chart-writes rect.bar-agent").count() == 1
    assert page.locator("#chart-writes rect.bar-human").count() == 1
    assert page.locator("#chart-turns rect.bar-turns").count() == 1
    box = page.locator("#chart-writes").bounding_box()
    assert box["width"] > 200 and box["height"] > 40  # drawn, not collapsed
    assert page.locator("#alerts a[href='/runs/acme/u1/run-1/']").count() == 1
    screenshot(page, "console-dashboard.png")


def test_the_access_log_puts_refusals_first(page, org, users):
    writes.remember(org.u1, "tz", "works in CET", principal=org.acme_agent)
    with pytest.raises(Forbidden):  # the outsider probes acme
        writes.publish(org.acme, "probe", "let me in", principal=users.p_outsider)
    for status in (403, 404):
        access_log.record(org.globex_agent, "remember", status, actor_ref="acme/u1")
    log_in(page, "auditor", "pw-audit-123")
    page.goto("/access/")
    assert page.inner_text(".refused-count") == "3"
    assert page.locator("tr.refused").count() == 3
    page.check("input[name=refused]")  # an htmx swap of the list, no reload
    # Not wait_for_function: Playwright evaluates it with eval(), which the CSP forbids.
    expect(page.locator("#access-rows tbody tr")).to_have_count(3)
    assert "refused=on" in page.url
    screenshot(page, "console-access.png")


def test_live_updates_stop_when_the_session_ends(page, org, users):
    _open_live_ledger(page)
    page.context.clear_cookies()  # the session ends: the next poll is sent to /login/
    page.wait_for_selector("[data-live-state]:has-text('session ended')", timeout=POLL_MS * 3)
    assert page.locator("#ledger-body form[action='/login/']").count() == 0


def test_a_checkpoint_without_a_key_to_trust_is_refused_in_place(page, org, users, tmp_path):
    from memory_core.ledger import checkpoints

    writes.publish(org.acme, "fiscal-year", "starts in October", principal=users.p_owner)
    private, _ = checkpoints.write_keypair(tmp_path / "keys")
    taken = checkpoints.take(checkpoints.load_signing_key(private), users.p_su)
    (tmp_path / "cp.json").write_text(checkpoints.dumps(taken))
    log_in(page, "root", "pw-root-123")
    page.goto("/ledger/?kind=memory.published")
    page.evaluate("window.notReloaded = true")
    page.set_input_files("input[name=checkpoint]", str(tmp_path / "cp.json"))
    page.click("form.checkpoint-verify-form button[type=submit]")
    expect(page.locator("#chain-status p.error")).to_contain_text("upload the public key")
    assert page.evaluate("window.notReloaded") is True  # htmx swapped the status in place
    assert page.url.endswith("/ledger/?kind=memory.published")
    assert page.locator("text=Back to the scopes").count() == 0


def test_the_ledger_offers_its_export_with_its_filters(page, org, users):
    writes.publish(org.acme, "fiscal-year", "starts in October", principal=users.p_owner)
    log_in(page, "auditor", "pw-audit-123")
    page.goto("/ledger/")
    page.fill("input[name=kind]", "memory.published")
    page.press("input[name=kind]", "Enter")  # an htmx swap of the list
    link = page.locator("#ledger-rows .export-links a", has_text="CSV")
    expect(link).to_have_attribute("href", "/exports/ledger.csv?kind=memory.published")
    with page.expect_download() as download:
        link.click()
    rows = open(download.value.path()).read().splitlines()
    assert len(rows) == 2 and "memory.published" in rows[1]
