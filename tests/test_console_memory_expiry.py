"""A memory's expiry, set and cleared on its page (curation.set_expiry / clear_expiry).

Expiry is not part of the fact: the memory_fields_immutable trigger leaves `expires_at` out
and the maintained counts set expired rows apart at read time, so it changes in place on the
live version, as a pin does (no new version), with a ledger event and an access-log row. Who
may do it is who may pin: an administrator of the memory's scope.
"""

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.db import InternalError, connection, transaction
from django.utils import timezone

from memory_core import curation, writes
from memory_core.errors import Forbidden, Invalid, NotFound
from memory_core.models import AccessLog, LedgerEvent, Memory
from tests.helpers import refusals

HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def policy(users, org):
    return writes.publish(org.acme, "fiscal-year", "starts in October", principal=users.p_owner)


def _at_minute(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(second=0, microsecond=0)


def _later(days=30) -> datetime:
    return _at_minute(timezone.now() + timedelta(days=days))


def _typed(moment: datetime) -> str:
    """As a datetime-local input sends it."""
    return moment.strftime("%Y-%m-%dT%H:%M")


def _post(client, user, memory, action, data=None, **headers):
    client.force_login(user)
    return client.post(f"/memories/{memory.uid}/{action}/", data or {}, **headers)


def _fresh(memory):
    return Memory.objects.get(pk=memory.pk)


def _expire_already(memory):
    """An expiry in the past, as an import or an earlier setting leaves it once time passes."""
    Memory.objects.filter(pk=memory.pk).update(expires_at=timezone.now() - timedelta(hours=1))


def _events(kind):
    return LedgerEvent.objects.filter(kind=kind)


# --- the service -----------------------------------------------------------------------


def test_setting_an_expiry_changes_the_live_row_in_place_and_is_ledgered(users, policy):
    when = _later()
    versions = Memory.objects.count()
    curation.set_expiry(policy, when, principal=users.p_owner)
    fresh = _fresh(policy)
    assert fresh.expires_at == when and fresh.text == policy.text and fresh.retired_at is None
    assert Memory.objects.count() == versions  # no new version
    event = _events("memory.expiry_set").get()
    assert event.payload == {"memory": policy.uid, "expires_at": when.isoformat()}
    assert (event.scope, event.principal) == ("tenant:acme", "user:owner")
    row = AccessLog.objects.get(action="expiry.set")
    assert (row.outcome, row.memory_ids, row.scope) == (200, [policy.uid], "tenant:acme")
    # From then on it is not live: no prompt sees it.
    assert Memory.objects.live(now=when - timedelta(minutes=1)).filter(pk=policy.pk).exists()
    assert not Memory.objects.live(now=when).filter(pk=policy.pk).exists()


def test_setting_the_same_expiry_again_records_no_second_event(users, policy):
    when = _later()
    curation.set_expiry(policy, when, principal=users.p_owner)
    curation.set_expiry(policy, when, principal=users.p_owner)
    assert _events("memory.expiry_set").count() == 1


def test_an_expiry_with_an_offset_is_stored_as_the_same_instant(users, policy):
    when = _later().astimezone(timezone.get_fixed_timezone(120))
    curation.set_expiry(policy, when, principal=users.p_owner)
    assert _fresh(policy).expires_at == when
    assert _events("memory.expiry_set").get().payload["expires_at"].endswith("+00:00")


@pytest.mark.parametrize(
    "when, message",
    [
        (lambda: timezone.now() - timedelta(minutes=1), "must lie in the future"),
        (lambda: timezone.now(), "must lie in the future"),
        (lambda: datetime(2999, 1, 1), "needs a time zone"),
        (
            lambda: datetime(9999, 12, 31, 23, 59, tzinfo=timezone.get_fixed_timezone(-60)),
            "before the year 10000",
        ),
    ],
)
def test_a_refused_expiry_changes_nothing_and_is_logged(users, policy, when, message):
    with pytest.raises(Invalid, match=message):
        curation.set_expiry(policy, when(), principal=users.p_owner)
    assert _fresh(policy).expires_at is None
    assert not _events("memory.expiry_set").exists()
    assert AccessLog.objects.get(action="expiry.set").outcome == 422


def test_clearing_an_expiry_is_ledgered_and_clearing_again_changes_nothing(users, policy):
    curation.set_expiry(policy, _later(), principal=users.p_owner)
    curation.clear_expiry(policy, principal=users.p_owner)
    assert _fresh(policy).expires_at is None
    event = _events("memory.expiry_cleared").get()
    assert event.payload == {"memory": policy.uid}
    curation.clear_expiry(policy, principal=users.p_owner)
    assert _events("memory.expiry_cleared").count() == 1
    assert AccessLog.objects.filter(action="expiry.clear", outcome=200).count() == 2


def test_an_expired_memory_is_back_in_prompts_when_given_a_later_expiry(users, policy):
    _expire_already(policy)
    assert not Memory.objects.live().filter(pk=policy.pk).exists()
    curation.set_expiry(policy, _later(), principal=users.p_owner)
    assert Memory.objects.live().filter(pk=policy.pk).exists()


def test_an_expired_memory_is_back_in_prompts_when_its_expiry_is_cleared(users, policy):
    _expire_already(policy)
    curation.clear_expiry(policy, principal=users.p_owner)
    assert Memory.objects.live().filter(pk=policy.pk).exists()


@pytest.mark.parametrize("who", ["p_auditor", "p_outsider"])
def test_only_an_administrator_of_the_scope_may(users, policy, who):
    for change in (
        lambda: curation.set_expiry(policy, _later(), principal=getattr(users, who)),
        lambda: curation.clear_expiry(policy, principal=getattr(users, who)),
    ):
        with pytest.raises(Forbidden):
            change()
    assert _fresh(policy).expires_at is None
    assert not LedgerEvent.objects.filter(kind__startswith="memory.expiry").exists()
    assert AccessLog.objects.filter(action__startswith="expiry.", outcome=403).count() == 2


def test_an_agent_cannot_set_an_expiry(org, policy):
    with pytest.raises(Forbidden):
        curation.set_expiry(policy, _later(), principal=org.acme_agent)
    assert _fresh(policy).expires_at is None


def test_a_retired_version_is_not_live_to_change(users, policy):
    writes.correct(policy, "starts in April", principal=users.p_owner)
    with pytest.raises(NotFound, match="no longer live"):
        curation.set_expiry(policy, _later(), principal=users.p_owner)
    with pytest.raises(NotFound):
        curation.clear_expiry(policy, principal=users.p_owner)
    assert _fresh(policy).expires_at is None


def test_the_database_takes_an_expiry_change_but_never_a_text_change(policy):
    """Why expiry changes in place: the immutable-fields trigger leaves it out."""
    later = _later()
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE memory_core_memory SET expires_at = %s WHERE id = %s", [later, policy.pk]
        )
    assert _fresh(policy).expires_at == later
    with pytest.raises(InternalError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE memory_core_memory SET text = 'x' WHERE id = %s", [policy.pk])


# --- the console: plain POSTs ----------------------------------------------------------


def test_owner_sets_an_expiry_on_the_memory_page(client, users, policy):
    when = _later()
    response = _post(client, users.owner, policy, "expiry", {"expires_at": _typed(when)})
    assert response.status_code == 302 and response["Location"] == f"/memories/{policy.uid}/"
    assert _fresh(policy).expires_at == when
    assert _events("memory.expiry_set").get().principal == "user:owner"
    page = client.get(response["Location"]).text
    shown = when.strftime("%Y-%m-%d %H:%M")
    assert f"It expires at {shown} UTC" in page
    assert re.search(rf"<dt>Expires</dt><dd><time [^>]*>{shown} UTC</time></dd>", page)
    assert f'name="expires_at" required value="{_typed(when)}"' in page
    assert f"/memories/{policy.uid}/expiry/clear/" in page


@pytest.mark.parametrize(
    "typed, stored",
    [
        ("2999-01-31 09:15", datetime(2999, 1, 31, 9, 15, tzinfo=UTC)),
        ("2999-01-31T09:15:30", datetime(2999, 1, 31, 9, 15, 30, tzinfo=UTC)),
        ("2999-01-31T09:15+02:00", datetime(2999, 1, 31, 7, 15, tzinfo=UTC)),
        ("2999-01-31", datetime(2999, 1, 31, tzinfo=UTC)),
    ],
)
def test_the_time_is_read_as_utc_unless_it_says_otherwise(client, users, policy, typed, stored):
    response = _post(client, users.owner, policy, "expiry", {"expires_at": typed})
    assert response.status_code == 302
    assert _fresh(policy).expires_at == stored


@pytest.mark.parametrize(
    "typed, message",
    [
        ("", "give the date and time the memory expires"),
        ("tomorrow", "the expiry must be a date and time"),
        ("2999-13-01T10:00", "the expiry must be a date and time"),
        ("2999-02-30T10:00", "the expiry must be a date and time"),
        ("12345-01-01T10:00", "the expiry must be a date and time"),
        ("2001-01-01T10:00", "the expiry must lie in the future"),
    ],
)
def test_a_refused_time_is_422_beside_the_form_and_changes_nothing(
    client, users, policy, typed, message
):
    response = _post(client, users.owner, policy, "expiry", {"expires_at": typed})
    assert response.status_code == 422
    card = re.search(r'<section class="card action" id="expiry">.*?</section>', response.text, re.S)
    assert message in card.group(0)
    assert _fresh(policy).expires_at is None
    assert not LedgerEvent.objects.filter(kind__startswith="memory.expiry").exists()


def test_owner_clears_an_expiry(client, users, policy):
    curation.set_expiry(policy, _later(), principal=users.p_owner)
    response = _post(client, users.owner, policy, "expiry/clear")
    assert response.status_code == 302
    assert _fresh(policy).expires_at is None
    assert _events("memory.expiry_cleared").get().principal == "user:owner"
    page = client.get(response["Location"]).text
    assert "Expiry cleared: it never expires." in page
    assert "<dt>Expires</dt><dd>never</dd>" in page
    assert f"/memories/{policy.uid}/expiry/clear/" not in page  # nothing to clear


@pytest.mark.parametrize("action, data", [("expiry", None), ("expiry/clear", {})])
def test_auditor_is_403_logged_and_nothing_changes(client, users, policy, action, data):
    curation.set_expiry(policy, _later(), principal=users.p_owner)
    before = _fresh(policy).expires_at
    events = LedgerEvent.objects.count()
    data = {"expires_at": _typed(_later(60))} if data is None else data
    response = _post(client, users.auditor, policy, action, data)
    assert response.status_code == 403
    assert _fresh(policy).expires_at == before
    assert LedgerEvent.objects.count() == events
    logged = {"expiry": "expiry.set", "expiry/clear": "expiry.clear"}[action]
    assert refusals(logged, 403, "user:auditor").exists()


@pytest.mark.parametrize(
    "action, logged", [("expiry", "expiry.set"), ("expiry/clear", "expiry.clear")]
)
def test_outsider_is_404_logged_and_nothing_changes(client, users, policy, action, logged):
    response = _post(client, users.outsider, policy, action, {"expires_at": _typed(_later())})
    assert response.status_code == 404
    assert _fresh(policy).expires_at is None
    row = refusals(logged, 404, "user:outsider").get()
    assert row.memory_ids == [policy.uid]


@pytest.mark.parametrize("action", ["expiry", "expiry/clear"])
def test_anonymous_is_sent_to_login_and_a_get_to_the_memory_page(client, users, policy, action):
    response = client.post(f"/memories/{policy.uid}/{action}/", {"expires_at": _typed(_later())})
    assert response.status_code == 302 and response["Location"].startswith("/login/")
    client.force_login(users.owner)
    response = client.get(f"/memories/{policy.uid}/{action}/")
    assert response.status_code == 303 and response["Location"] == f"/memories/{policy.uid}/"
    assert _fresh(policy).expires_at is None


def test_a_retired_version_is_404_to_set_and_changes_nothing(client, users, policy):
    writes.correct(policy, "starts in April", principal=users.p_owner)
    response = _post(client, users.owner, policy, "expiry", {"expires_at": _typed(_later())})
    assert response.status_code == 404
    assert not Memory.objects.filter(expires_at__isnull=False).exists()


# --- the console: htmx and what the page shows -----------------------------------------


def test_htmx_set_answers_the_memory_content_with_the_result(client, users, policy):
    when = _later()
    response = _post(client, users.owner, policy, "expiry", {"expires_at": _typed(when)}, **HX)
    assert response.status_code == 200
    assert response.text.strip().startswith('<div id="memory-content">')
    assert "It expires at" in response.text
    assert _fresh(policy).expires_at == when


def test_htmx_refusal_comes_back_inside_the_fragment(client, users, policy):
    response = _post(
        client, users.owner, policy, "expiry", {"expires_at": "2001-01-01T00:00"}, **HX
    )
    assert response.status_code == 200
    assert "the expiry must lie in the future" in response.text
    assert _fresh(policy).expires_at is None


def test_the_page_says_when_a_memory_expired(client, users, policy):
    _expire_already(policy)
    client.force_login(users.owner)
    page = client.get(f"/memories/{policy.uid}/").text
    assert '<span class="state state-retired">expired</span>' in page
    assert re.search(r"<dt>Expired</dt><dd><time [^>]*>[^<]+ UTC</time> — in no prompt", page)
    card = re.search(r'<section class="card action" id="expiry">.*?</section>', page, re.S)
    assert "Expired at" in card.group(0) and "brings it back" in card.group(0)


def test_an_auditor_sees_the_expiry_but_no_form(client, users, policy):
    curation.set_expiry(policy, _later(), principal=users.p_owner)
    client.force_login(users.auditor)
    page = client.get(f"/memories/{policy.uid}/").text
    assert "<dt>Expires</dt>" in page
    assert 'id="expiry"' not in page and "/expiry/" not in page
