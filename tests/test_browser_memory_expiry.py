"""A memory's expiry in a real browser: set with the date-and-time input, then cleared, both
swapped in place."""

from datetime import UTC, timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from memory_core import writes
from memory_core.models import LedgerEvent, Memory
from tests.browser import log_in

pytestmark = pytest.mark.browser


def test_an_owner_sets_and_clears_an_expiry_on_the_memory_page(page, org, users):
    memory = writes.publish(org.acme, "fiscal-year", "starts in October", principal=users.p_owner)
    when = (timezone.now() + timedelta(days=30)).astimezone(UTC).replace(second=0, microsecond=0)
    log_in(page, "owner", "pw-owner-123")
    page.goto(f"/memories/{memory.uid}/")
    page.evaluate("window.__sameDocument = 'yes'")

    page.fill("#expiry-at", when.strftime("%Y-%m-%dT%H:%M"))
    page.click("#expiry button[type=submit]:has-text('Set expiry')")
    expect(page.locator("#memory-content ul.flash")).to_contain_text("It expires at")
    assert Memory.objects.get(pk=memory.pk).expires_at == when
    expect(page.locator("#expiry")).to_contain_text(when.strftime("%Y-%m-%d %H:%M"))

    page.click("#expiry button:has-text('Clear expiry')")
    expect(page.locator("#memory-content ul.flash")).to_contain_text("Expiry cleared")
    assert Memory.objects.get(pk=memory.pk).expires_at is None
    assert page.evaluate("window.__sameDocument") == "yes"
    events = LedgerEvent.objects.filter(kind__startswith="memory.expiry").order_by("id")
    kinds = list(events.values_list("kind", flat=True))
    assert kinds == ["memory.expiry_set", "memory.expiry_cleared"]
