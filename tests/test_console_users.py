"""The Users page: superusers only; grants given and revoked, users created."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from memory_core.models import AccessLog, LedgerEvent, ScopeGrant
from tests.helpers import login, refusals

POSTS = [
    ("/users/grants/", {"username": "owner", "scope": "tenant:globex", "role": "admin"}),
    ("/users/grants/revoke/", {"username": "owner", "scope": "tenant:acme"}),
    (
        "/users/create/",
        {"username": "newbie", "password1": "pw-x7-long!", "password2": "pw-x7-long!"},
    ),
]
POST_ACTIONS = {
    "/users/grants/": "grant",
    "/users/grants/revoke/": "grant.revoke",
    "/users/create/": "user.create",
}


def _row(text: str, username: str) -> str:
    return re.search(rf'<tr id="user-{username}">.*?</tr>', text, re.S).group(0)


def _grants():
    return set(ScopeGrant.objects.values_list("user__username", "scope__token", "role"))


# --- who gets in -----------------------------------------------------------------------


def test_anonymous_is_sent_to_login(client, users):
    response = client.get("/users/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")


@pytest.mark.parametrize("path, data", POSTS)
def test_anonymous_posts_are_sent_to_login_and_change_nothing(client, users, path, data):
    before = _grants()
    response = client.post(path, data)
    assert response.status_code == 302 and response["Location"].startswith("/login/")
    assert _grants() == before
    assert not get_user_model().objects.filter(username="newbie").exists()


@pytest.mark.parametrize("who", ["owner", "auditor", "outsider"])
def test_non_superuser_gets_a_403_page_and_an_access_log_row(client, users, who):
    response = login(client, getattr(users, who)).get("/users/")
    assert response.status_code == 403
    assert "only a superuser" in response.text
    assert refusals("users.read", 403, f"user:{who}").exists()


@pytest.mark.parametrize("who", ["owner", "auditor", "outsider"])
@pytest.mark.parametrize("path, data", POSTS)
def test_non_superuser_posts_are_403_logged_and_change_nothing(client, users, who, path, data):
    before = _grants()
    events = LedgerEvent.objects.count()
    response = login(client, getattr(users, who)).post(path, data)
    assert response.status_code == 403
    assert _grants() == before
    assert LedgerEvent.objects.count() == events
    assert not get_user_model().objects.filter(username="newbie").exists()
    assert refusals(POST_ACTIONS[path], 403, f"user:{who}").exists()


def test_superuser_sees_every_user_and_their_grants(client, users):
    response = login(client, users.su).get("/users/")
    assert response.status_code == 200
    text = response.text
    for name in ("root", "owner", "auditor", "outsider"):
        assert f"<strong>{name}</strong>" in text
    owner_row = _row(text, "owner")
    assert 'href="/scopes/tenant:acme/"' in owner_row and "role-admin" in owner_row
    auditor_row = _row(text, "auditor")
    assert "role-auditor" in auditor_row


def test_the_users_link_is_in_the_nav_for_superusers_only(client, users):
    assert 'href="/users/"' in login(client, users.su).get("/scopes/").text
    assert 'href="/users/"' not in login(client, users.owner).get("/scopes/").text


@pytest.mark.parametrize("path", ["/users/grants/", "/users/grants/revoke/", "/users/create/"])
def test_a_get_of_a_users_action_is_sent_to_the_users_page(client, users, path):
    response = login(client, users.su).get(path)
    assert response.status_code == 303 and response["Location"] == "/users/"


# --- grant -----------------------------------------------------------------------------


def test_superuser_grants_a_role_with_a_ledger_event(client, users, org):
    response = login(client, users.su).post(
        "/users/grants/", {"username": "owner", "scope": "tenant:globex", "role": "auditor"}
    )
    assert response.status_code == 302 and response["Location"] == "/users/"
    assert ScopeGrant.objects.filter(user=users.owner, scope=org.globex, role="auditor").exists()
    event = LedgerEvent.objects.get(kind="grant.set", principal="user:root")
    assert event.scope == "tenant:globex"
    assert event.payload == {"user": "owner", "role": "auditor"}
    assert "owner is now auditor of tenant:globex" in client.get("/users/").text
    # The grant takes effect at once.
    assert login(client, users.owner).get("/scopes/tenant:globex/").status_code == 200


def test_granting_again_changes_the_role(client, users, org):
    login(client, users.su).post(
        "/users/grants/", {"username": "auditor", "scope": "tenant:acme", "role": "admin"}
    )
    assert list(
        ScopeGrant.objects.filter(user=users.auditor, scope=org.acme).values_list("role", flat=True)
    ) == ["admin"]


@pytest.mark.parametrize(
    "data, message",
    [
        ({"username": "owner", "scope": "tenant:nowhere", "role": "admin"}, "no scope"),
        ({"username": "nobody", "scope": "tenant:acme", "role": "admin"}, "no user"),
        ({"username": "owner", "scope": "tenant:globex", "role": "owner"}, "role must be"),
        ({"username": "owner", "scope": "<script>x</script>", "role": "admin"}, "&lt;script&gt;"),
    ],
)
def test_invalid_grant_rerenders_the_page_with_the_message(client, users, data, message):
    before = _grants()
    response = login(client, users.su).post("/users/grants/", data)
    assert response.status_code == 422
    assert message in response.text
    assert "<script>x</script>" not in response.text
    assert _grants() == before


# --- revoke ----------------------------------------------------------------------------


def test_superuser_revokes_a_grant(client, users, org):
    response = login(client, users.su).post(
        "/users/grants/revoke/", {"username": "owner", "scope": "tenant:acme"}
    )
    assert response.status_code == 302 and response["Location"] == "/users/"
    assert not ScopeGrant.objects.filter(user=users.owner).exists()
    event = LedgerEvent.objects.get(kind="grant.revoked")
    assert event.scope == "tenant:acme" and event.payload == {"user": "owner"}
    assert login(client, users.owner).get("/scopes/tenant:acme/").status_code == 404


def test_revoking_a_grant_that_does_not_exist_is_404(client, users):
    before = _grants()
    response = login(client, users.su).post(
        "/users/grants/revoke/", {"username": "owner", "scope": "tenant:globex"}
    )
    assert response.status_code == 404
    assert _grants() == before


# --- create a user ---------------------------------------------------------------------


def test_superuser_creates_a_user_without_any_grant(client, users):
    response = login(client, users.su).post(
        "/users/create/",
        {"username": "newbie", "password1": "pw-x7-long!", "password2": "pw-x7-long!"},
    )
    assert response.status_code == 302
    newbie = get_user_model().objects.get(username="newbie")
    assert newbie.check_password("pw-x7-long!")
    assert not newbie.is_superuser and not newbie.scope_grants.exists()
    assert AccessLog.objects.filter(
        action="user.create", outcome=201, principal="user:root", detail={"user": "newbie"}
    ).exists()
    event = LedgerEvent.objects.get(kind="user.created")
    assert (event.payload, event.scope, event.principal) == (
        {"user": "newbie"},
        "global",
        "user:root",
    )
    assert not LedgerEvent.objects.filter(payload__icontains="pw-x7-long!").exists()


@pytest.mark.parametrize(
    "username, password1, password2",
    [
        ("newbie", "a1-b2", "a1-b2"),  # MinimumLengthValidator
        ("newbie", "password123", "password123"),  # CommonPasswordValidator
        ("newbie", "pw-x7-long!", "pw-x7-other!"),  # mismatch
        ("owner", "pw-x7-long!", "pw-x7-long!"),  # taken
        ("bad name<", "pw-x7-long!", "pw-x7-long!"),  # not a username
    ],
)
def test_invalid_new_user_is_422_and_creates_nothing(client, users, username, password1, password2):
    count = get_user_model().objects.count()
    response = login(client, users.su).post(
        "/users/create/", {"username": username, "password1": password1, "password2": password2}
    )
    assert response.status_code == 422
    assert 'class="error"' in response.text
    assert password1 not in response.text  # a password is never echoed back
    assert get_user_model().objects.count() == count
    assert not LedgerEvent.objects.filter(kind="user.created").exists()


# --- CSRF ------------------------------------------------------------------------------


@pytest.mark.parametrize("path, data", POSTS)
def test_posts_without_csrf_token_are_refused(users, path, data):
    client = Client(enforce_csrf_checks=True)
    client.force_login(users.su)
    before = _grants()
    assert client.post(path, data).status_code == 403
    assert _grants() == before
    assert not get_user_model().objects.filter(username="newbie").exists()


def test_grant_with_the_page_csrf_token_is_accepted(users, org):
    client = Client(enforce_csrf_checks=True)
    client.force_login(users.su)
    page = client.get("/users/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    data = {"csrfmiddlewaretoken": token, "username": "owner", "scope": "global", "role": "auditor"}
    assert client.post("/users/grants/", data).status_code == 302
    assert ScopeGrant.objects.filter(user=users.owner, scope=org.root).exists()
