"""The user lifecycle: deactivate/reactivate, a new password, paging and search, and the
confirmation steps before a user is deactivated and before a grant is revoked."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from memory_core.accounts import users as user_service
from memory_core.accounts.principals import Principal
from memory_core.errors import Forbidden, Invalid
from memory_core.models import AccessLog, LedgerEvent
from tests.helpers import login, refusals

NEW_PASSWORD = "fresh-Pw-91-long!"
CONFIRMED = {"confirm": "yes"}  # what the confirmation step's button sends
ACTIONS = [
    ("deactivate", {"confirm": "yes"}, "user.deactivate"),
    ("reactivate", {}, "user.reactivate"),
    ("password", {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD}, "user.set_password"),
]


def _person(username):
    return get_user_model().objects.get(username=username)


def _no_password_anywhere(password):
    assert not LedgerEvent.objects.filter(payload__icontains=password).exists()
    assert not any(password in str(row.detail) for row in AccessLog.objects.all())


def _can_log_in(username, password) -> bool:
    return Client().login(username=username, password=password)


# --- refusals --------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["owner", "auditor", "outsider"])
@pytest.mark.parametrize("action, data, logged", ACTIONS)
def test_non_superusers_are_403_logged_and_change_nothing(client, users, who, action, data, logged):
    target = "outsider" if who != "outsider" else "owner"
    if action == "reactivate":
        get_user_model().objects.filter(username=target).update(is_active=False)
    before = _person(target)
    events = LedgerEvent.objects.count()
    response = login(client, getattr(users, who)).post(f"/users/{target}/{action}/", data)
    assert response.status_code == 403
    after = _person(target)
    assert (after.is_active, after.password) == (before.is_active, before.password)
    assert LedgerEvent.objects.count() == events
    assert refusals(logged, 403, f"user:{who}").exists()


@pytest.mark.parametrize("action, data, logged", ACTIONS)
def test_an_unknown_user_is_404(client, users, action, data, logged):
    response = login(client, users.su).post(f"/users/nobody/{action}/", data)
    assert response.status_code == 404


@pytest.mark.parametrize("action, data, logged", ACTIONS)
def test_anonymous_posts_are_sent_to_login(client, users, action, data, logged):
    response = client.post(f"/users/owner/{action}/", data)
    assert response.status_code == 302 and response["Location"].startswith("/login/")
    assert _person("owner").is_active


@pytest.mark.parametrize("action, data, logged", ACTIONS)
def test_a_get_of_a_user_action_is_sent_to_the_users_page(client, users, action, data, logged):
    response = login(client, users.su).get(f"/users/owner/{action}/")
    assert response.status_code == 303 and response["Location"] == "/users/"


# --- deactivate and reactivate ---------------------------------------------------------


def test_superuser_deactivates_a_user_who_then_cannot_log_in(client, users):
    assert _can_log_in("owner", "pw-owner-123")
    owner_session = login(Client(), users.owner)
    response = login(client, users.su).post("/users/owner/deactivate/", CONFIRMED)
    assert response.status_code == 302 and response["Location"] == "/users/"
    assert not _person("owner").is_active
    assert not _can_log_in("owner", "pw-owner-123")
    # A session they already had ends too.
    assert owner_session.get("/").status_code == 302
    event = LedgerEvent.objects.get(kind="user.deactivated")
    assert event.payload == {"user": "owner", "active": False} and event.principal == "user:root"
    assert AccessLog.objects.filter(
        action="user.deactivate", outcome=200, principal="user:root", detail__user="owner"
    ).exists()
    page = client.get("/users/").text
    assert "Deactivated owner" in page
    row = re.search(r'<tr id="user-owner".*?</tr>', page, re.S).group(0)
    assert "inactive" in row and "/users/owner/reactivate/" in row


def test_superuser_reactivates_a_user(client, users):
    login(client, users.su).post("/users/owner/deactivate/", CONFIRMED)
    response = client.post("/users/owner/reactivate/")
    assert response.status_code == 302
    assert _person("owner").is_active and _can_log_in("owner", "pw-owner-123")
    assert LedgerEvent.objects.filter(kind="user.reactivated").count() == 1
    assert AccessLog.objects.filter(action="user.reactivate", outcome=200).exists()


def test_deactivating_twice_records_one_event(client, users):
    login(client, users.su).post("/users/owner/deactivate/", CONFIRMED)
    client.post("/users/owner/deactivate/", CONFIRMED)
    assert LedgerEvent.objects.filter(kind="user.deactivated").count() == 1


def test_a_superuser_cannot_deactivate_themselves(client, users):
    response = login(client, users.su).post("/users/root/deactivate/", CONFIRMED)
    assert response.status_code == 422
    assert "you cannot deactivate yourself" in response.text
    assert _person("root").is_active
    assert not LedgerEvent.objects.filter(kind="user.deactivated").exists()
    assert refusals("user.deactivate", 422, "user:root").exists()


def test_the_users_page_offers_no_deactivate_button_for_oneself(client, users):
    page = login(client, users.su).get("/users/").text
    assert "/users/root/deactivate/" not in page and "/users/owner/deactivate/" in page


def test_the_service_refuses_a_non_superuser(users):
    with pytest.raises(Forbidden):
        user_service.set_active("auditor", False, principal=users.p_owner)
    assert _person("auditor").is_active


# --- a new password --------------------------------------------------------------------


def test_superuser_sets_a_new_password(client, users):
    response = login(client, users.su).post(
        "/users/owner/password/", {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD}
    )
    assert response.status_code == 302 and response["Location"] == "/users/"
    assert _can_log_in("owner", NEW_PASSWORD) and not _can_log_in("owner", "pw-owner-123")
    event = LedgerEvent.objects.get(kind="user.password_set")
    assert event.payload == {"user": "owner"}
    assert AccessLog.objects.filter(action="user.set_password", outcome=200).exists()
    _no_password_anywhere(NEW_PASSWORD)
    assert "Set a new password for owner" in client.get("/users/").text


def test_a_superuser_setting_their_own_password_stays_logged_in(client, users):
    login(client, users.su).post(
        "/users/root/password/", {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD}
    )
    assert client.get("/users/").status_code == 200
    assert _can_log_in("root", NEW_PASSWORD)


@pytest.mark.parametrize(
    "password1, password2, message",
    [
        ("short", "short", "too short"),
        ("password123", "password123", "too common"),
        (NEW_PASSWORD, NEW_PASSWORD + "x", "the two passwords differ"),
    ],
)
def test_a_password_refused_by_validation_is_422_and_changes_nothing(
    client, users, password1, password2, message
):
    before = _person("owner").password
    response = login(client, users.su).post(
        "/users/owner/password/", {"password1": password1, "password2": password2}
    )
    assert response.status_code == 422
    assert message in response.text
    assert f'value="{password1}"' not in response.text  # never echoed back
    assert _person("owner").password == before
    assert not LedgerEvent.objects.filter(kind="user.password_set").exists()
    _no_password_anywhere(password1)


def test_the_password_service_validates_too(users):
    with pytest.raises(Invalid):
        user_service.set_password("owner", "123", principal=Principal.system("cli"))


# --- paging and search -----------------------------------------------------------------


def test_search_by_username(client, users):
    response = login(client, users.su).get("/users/?q=AUD")
    assert response.status_code == 200
    assert 'id="user-auditor"' in response.text and 'id="user-owner"' not in response.text
    assert "1 user matches" in response.text


def test_htmx_search_gets_the_rows_fragment(client, users):
    response = login(client, users.su).get("/users/?q=own", headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert 'id="user-rows"' in response.text and "<html" not in response.text
    assert 'id="user-owner"' in response.text


def test_the_users_list_is_paged(client, users, django_user_model):
    django_user_model.objects.bulk_create(
        [django_user_model(username=f"bulk{i:03}") for i in range(60)]
    )
    first = login(client, users.su).get("/users/").text
    assert "page 1 of 2" in first and 'id="user-auditor"' in first
    second = client.get("/users/?page=2").text
    assert 'id="user-root"' in second and 'id="user-auditor"' not in second
    # The grant form still offers every user.
    assert '<option value="root"' in first


def test_a_hostile_search_is_escaped(client, users):
    response = login(client, users.su).get("/users/?q=<script>x</script>")
    assert "<script>x</script>" not in response.text


# --- revoking a grant is confirmed first -----------------------------------------------


def test_revoking_a_grant_needs_a_confirmation_step(client, users):
    page = login(client, users.su).get("/users/").text
    row = re.search(r'<tr id="user-owner".*?</tr>', page, re.S).group(0)
    details = re.search(r'<details class="confirm inline">.*?</details>', row, re.S).group(0)
    assert "/users/grants/revoke/" in details and "Revoke this grant" in details
    assert "/users/grants/revoke/" not in row.replace(details, "")


# --- deactivating a user is confirmed first --------------------------------------------


def test_deactivating_needs_a_confirmation_step_in_the_row(client, users):
    page = login(client, users.su).get("/users/").text
    row = re.search(r'<tr id="user-owner".*?</tr>', page, re.S).group(0)
    details = re.search(r'<details class="confirm">.*?</details>', row, re.S).group(0)
    assert "/users/owner/deactivate/" in details and "Deactivate owner" in details
    assert 'name="confirm" value="yes"' in details
    assert "/users/owner/deactivate/" not in row.replace(details, "")


def test_a_deactivation_without_confirmation_only_asks(client, users):
    owner_session = login(Client(), users.owner)
    events, rows = LedgerEvent.objects.count(), AccessLog.objects.count()
    response = login(client, users.su).post("/users/owner/deactivate/")
    assert response.status_code == 200
    assert "Deactivate owner?" in response.text
    form = re.search(
        r'<form method="post" action="/users/owner/deactivate/".*?</form>', response.text, re.S
    ).group(0)
    assert 'name="confirm" value="yes"' in form
    # Nothing changed, and nothing is on record as changed.
    assert _person("owner").is_active
    assert owner_session.get("/").status_code == 200
    assert LedgerEvent.objects.count() == events
    assert AccessLog.objects.count() == rows
    # The page's own button does it.
    assert client.post("/users/owner/deactivate/", CONFIRMED).status_code == 302
    assert not _person("owner").is_active


@pytest.mark.parametrize("confirm", ["", "no", "off"])
def test_anything_but_a_ticked_confirmation_changes_nothing(client, users, confirm):
    response = login(client, users.su).post("/users/owner/deactivate/", {"confirm": confirm})
    assert response.status_code == 200 and "Deactivate owner?" in response.text
    assert _person("owner").is_active
    assert not LedgerEvent.objects.filter(kind="user.deactivated").exists()


def test_an_unconfirmed_deactivation_of_an_unknown_user_is_404_and_logged(client, users):
    response = login(client, users.su).post("/users/nobody/deactivate/")
    assert response.status_code == 404
    assert refusals("user.deactivate", 404, "user:root").exists()


def test_an_unconfirmed_deactivation_of_oneself_is_refused_at_once(client, users):
    response = login(client, users.su).post("/users/root/deactivate/")
    assert response.status_code == 422
    assert "you cannot deactivate yourself" in response.text
    assert _person("root").is_active
    assert refusals("user.deactivate", 422, "user:root").exists()


def test_an_unconfirmed_deactivation_of_an_inactive_user_says_so(client, users):
    get_user_model().objects.filter(username="owner").update(is_active=False)
    response = login(client, users.su).post("/users/owner/deactivate/")
    assert response.status_code == 302 and response["Location"] == "/users/"
    assert "owner is already inactive" in client.get("/users/").text
    assert not LedgerEvent.objects.filter(kind="user.deactivated").exists()


@pytest.mark.parametrize("who", ["owner", "auditor"])
def test_an_unconfirmed_deactivation_by_a_non_superuser_is_403(client, users, who):
    response = login(client, getattr(users, who)).post("/users/outsider/deactivate/")
    assert response.status_code == 403
    assert "Deactivate outsider?" not in response.text
    assert _person("outsider").is_active
    assert refusals("user.deactivate", 403, f"user:{who}").exists()


def test_the_confirmation_page_takes_any_username_django_allows(client, users, django_user_model):
    django_user_model.objects.create_user("a.b+c@d", password="pw-odd-123")
    response = login(client, users.su).post("/users/a.b+c@d/deactivate/")
    assert response.status_code == 200 and "Deactivate a.b+c@d?" in response.text
