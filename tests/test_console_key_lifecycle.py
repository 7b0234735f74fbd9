"""The API key lifecycle: pause/resume beside revoke, expiry, last used, live keys per reach."""

import re
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import IntegrityError, InternalError, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memory_core.accounts import keys
from memory_core.accounts.principals import Principal
from memory_core.errors import Invalid
from memory_core.models import AccessLog, ApiKey, LedgerEvent
from tests.helpers import bearer, login, refusals

ACTOR = "/api/v1/actors/u1"
SYSTEM = Principal.system("cli")


def _post(client, user, key, action):
    return login(client, user).post(f"/keys/{key.uid}/{action}/")


def _fresh(key) -> ApiKey:
    return ApiKey.objects.get(pk=key.pk)


# --- the status rule (no database) ------------------------------------------------------


def test_state_of_a_key_revoked_wins_over_paused_over_expired():
    now = timezone.now()
    past = now - timedelta(days=1)
    assert keys.state_of(ApiKey(), now) == "live"
    assert keys.state_of(ApiKey(expires_at=now + timedelta(days=1)), now) == "live"
    assert keys.state_of(ApiKey(expires_at=now), now) == "expired"
    assert keys.state_of(ApiKey(expires_at=past, paused_at=past), now) == "paused"
    assert keys.state_of(ApiKey(paused_at=past, revoked_at=past), now) == "revoked"


# --- pause and resume ------------------------------------------------------------------


def test_owner_pauses_a_key_which_then_authenticates_as_nothing(client, users, org):
    response = _post(client, users.owner, org.acme_key, "pause")
    assert response.status_code == 302 and response["Location"] == "/keys/"
    assert _fresh(org.acme_key).paused_at is not None
    assert keys.authenticate(org.acme_secret) is None
    assert LedgerEvent.objects.filter(
        kind="api_key.paused", payload__api_key=org.acme_key.uid, principal="user:owner"
    ).exists()
    assert AccessLog.objects.filter(
        action="api_key.pause", outcome=200, principal="user:owner", scope="tenant:acme"
    ).exists()
    page = client.get("/keys/").text
    assert "Paused the key acme host" in page
    assert 'class="state state-paused">paused<' in page
    assert f"/keys/{org.acme_key.uid}/resume/" in page


def test_a_paused_key_is_401_at_the_api_and_the_attempt_is_not_logged(client, users, org):
    keys.pause_api_key(org.acme_key, principal=SYSTEM)
    count = AccessLog.objects.count()
    assert client.get(ACTOR, headers=bearer(org.acme_secret)).status_code == 401
    assert AccessLog.objects.count() == count


def test_owner_resumes_a_paused_key(client, users, org):
    _post(client, users.owner, org.acme_key, "pause")
    response = _post(client, users.owner, org.acme_key, "resume")
    assert response.status_code == 302
    assert _fresh(org.acme_key).paused_at is None
    assert keys.authenticate(org.acme_secret) == org.acme_key
    assert LedgerEvent.objects.filter(kind="api_key.resumed", principal="user:owner").exists()
    assert AccessLog.objects.filter(action="api_key.resume", outcome=200).exists()


def test_pausing_twice_records_one_event(client, users, org):
    _post(client, users.owner, org.acme_key, "pause")
    _post(client, users.owner, org.acme_key, "pause")
    assert LedgerEvent.objects.filter(kind="api_key.paused").count() == 1


def test_a_revoked_key_cannot_be_resumed_or_paused(client, users, org):
    keys.revoke_api_key(org.acme_key, principal=SYSTEM)
    for action in ("resume", "pause"):
        assert _post(client, users.owner, org.acme_key, action).status_code == 302
    key = _fresh(org.acme_key)
    assert key.revoked_at is not None and key.paused_at is None
    assert not LedgerEvent.objects.filter(kind__in=["api_key.paused", "api_key.resumed"]).exists()
    with pytest.raises(Invalid):
        keys.resume_api_key(key, principal=SYSTEM)
    assert AccessLog.objects.filter(action="api_key.resume", outcome=422).exists()


def test_a_paused_key_can_be_revoked(client, users, org):
    _post(client, users.owner, org.acme_key, "pause")
    assert _post(client, users.owner, org.acme_key, "revoke").status_code == 302
    assert _fresh(org.acme_key).revoked_at is not None


@pytest.mark.parametrize("action", ["pause", "resume"])
def test_auditor_cannot_pause_or_resume(client, users, org, action):
    response = _post(client, users.auditor, org.acme_key, action)
    assert response.status_code == 403
    assert _fresh(org.acme_key).paused_at is None
    assert refusals(f"api_key.{action}", 403, "user:auditor").exists()


@pytest.mark.parametrize("action", ["pause", "resume"])
@pytest.mark.parametrize("who, key", [("outsider", "acme_key"), ("owner", "global_key")])
def test_a_key_outside_the_users_grants_is_404_to_pause_or_resume(
    client, users, org, who, key, action
):
    target = getattr(org, key)
    assert _post(client, getattr(users, who), target, action).status_code == 404
    assert _fresh(target).paused_at is None


def test_a_get_of_pause_is_sent_to_the_keys_page(client, users, org):
    response = login(client, users.owner).get(f"/keys/{org.acme_key.uid}/pause/")
    assert response.status_code in (302, 303, 405)
    assert _fresh(org.acme_key).paused_at is None


# --- expiry ----------------------------------------------------------------------------


def test_owner_creates_a_key_with_an_expiry(client, users, org):
    day = (timezone.localdate() + timedelta(days=30)).isoformat()
    response = login(client, users.owner).post(
        "/keys/create/", {"name": "temp", "reach": "tenant:acme", "expires": day}
    )
    assert response.status_code == 303
    key = ApiKey.objects.get(name="temp")
    assert timezone.localtime(key.expires_at).date().isoformat() == day
    assert LedgerEvent.objects.get(kind="api_key.created", payload__api_key=key.uid).payload[
        "expires_at"
    ]
    assert day in client.get("/keys/").text


@pytest.mark.parametrize("expires", ["yesterday", "2000-01-01"])
def test_an_expiry_that_is_not_a_future_date_is_a_form_error(client, users, org, expires):
    response = login(client, users.owner).post(
        "/keys/create/", {"name": "temp", "reach": "tenant:acme", "expires": expires}
    )
    assert response.status_code == 422
    assert not ApiKey.objects.filter(name="temp").exists()


def test_an_expired_key_authenticates_as_nothing_and_is_listed_as_expired(client, users, org):
    ApiKey.objects.filter(pk=org.acme_key.pk).update(
        created_at=timezone.now() - timedelta(days=2), expires_at=timezone.now()
    )
    assert keys.authenticate(org.acme_secret) is None
    assert client.get(ACTOR, headers=bearer(org.acme_secret)).status_code == 401
    page = login(client, users.owner).get("/keys/?state=expired").text
    assert "acme host" in page and 'state-expired">expired<' in page


def test_create_api_key_command_takes_expires_in_days(org):
    out = StringIO()
    call_command("create_api_key", name="cli temp", reach="tenant:acme", expires="7", stdout=out)
    key = ApiKey.objects.get(name="cli temp")
    assert timedelta(days=6) < key.expires_at - timezone.now() <= timedelta(days=7)
    assert keys.authenticate(out.getvalue().splitlines()[-1]) == key


def test_create_api_key_command_takes_an_iso_date(org):
    call_command(
        "create_api_key", name="cli d", reach="tenant:acme", expires="2099-01-31", stdout=StringIO()
    )
    assert timezone.localtime(ApiKey.objects.get(name="cli d").expires_at).year == 2099


# --- last used -------------------------------------------------------------------------


def test_last_used_is_set_by_the_authenticating_statement_alone(org):
    assert _fresh(org.acme_key).last_used_at is None
    with CaptureQueriesContext(connection) as queries:
        assert keys.authenticate(org.acme_secret) == org.acme_key
    assert len(queries) == 1
    assert _fresh(org.acme_key).last_used_at is not None


def test_last_used_is_not_rewritten_within_the_granularity(org):
    keys.authenticate(org.acme_secret)
    first = _fresh(org.acme_key).last_used_at
    keys.authenticate(org.acme_secret)
    assert _fresh(org.acme_key).last_used_at == first
    stale = timezone.now() - keys.LAST_USED_GRANULARITY - timedelta(seconds=1)
    ApiKey.objects.filter(pk=org.acme_key.pk).update(last_used_at=stale)
    keys.authenticate(org.acme_secret)
    assert _fresh(org.acme_key).last_used_at > stale


def test_a_wrong_secret_with_a_known_prefix_does_not_touch_last_used(org):
    wrong = org.acme_secret[:-1] + ("x" if org.acme_secret[-1] != "x" else "y")
    assert keys.authenticate(wrong) is None
    assert _fresh(org.acme_key).last_used_at is None


def test_the_keys_page_shows_last_used_and_live_keys_per_reach(client, users, org):
    keys.authenticate(org.acme_secret)
    page = login(client, users.su).get("/keys/").text
    assert re.search(r'title="to within five minutes">\d{4}-\d\d-\d\d', page)
    section = page[page.index('id="live-per-reach-head"') : page.index('id="key-rows"')]
    assert "tenant:acme" in section and "global" in section
    keys.pause_api_key(org.acme_key, principal=SYSTEM)
    section = client.get("/keys/").text
    section = section[section.index('id="live-per-reach-head"') : section.index('id="key-rows"')]
    assert "tenant:acme" not in section


@pytest.mark.parametrize("state, name", [("live", "acme host"), ("paused", "acme host")])
def test_the_state_filter_knows_paused_keys(client, users, org, state, name):
    if state == "paused":
        keys.pause_api_key(org.acme_key, principal=SYSTEM)
    page = login(client, users.owner).get(f"/keys/?state={state}").text
    assert name in page


# --- what the database refuses ---------------------------------------------------------


def test_the_database_refuses_an_expiry_before_creation(org):
    with pytest.raises(IntegrityError), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE memory_core_apikey SET expires_at = created_at - interval '1 day'"
                " WHERE id = %s",
                [org.acme_key.pk],
            )


@pytest.mark.parametrize(
    "assignment",
    ["revoked_at = NULL", "paused_at = now()", "expires_at = now() + interval '1 year'"],
)
def test_the_database_keeps_a_revoked_key_revoked(org, assignment):
    keys.revoke_api_key(org.acme_key, principal=SYSTEM)
    with pytest.raises(InternalError), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE memory_core_apikey SET {assignment} WHERE id = %s", [org.acme_key.pk]
            )
    assert _fresh(org.acme_key).revoked_at is not None
