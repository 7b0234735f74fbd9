"""Every POST-only console address answers a GET by sending it to the page the action is
done from (a reload after a refused form, a pasted address), never with a bare 405; it
changes nothing, and other methods stay 405."""

import pytest
from django.urls import get_resolver

from memory_core import writes
from memory_core.models import AccessLog, LedgerEvent, Memory
from tests.helpers import login


@pytest.fixture
def policy(users, org):
    return writes.publish(org.acme, "fiscal-year", "starts in October", principal=users.p_owner)


def _routes(org, policy):
    memory, other = policy.uid, "mem_00000000000000000000000000"
    mem_page = f"/memories/{memory}/"
    return {
        "scope-publish": ("/scopes/tenant:acme/publish/", "/scopes/tenant:acme/"),
        "memory-correct": (f"{mem_page}correct/", mem_page),
        "memory-republish": (f"{mem_page}republish/", mem_page),
        "memory-pin": (f"{mem_page}pin/", mem_page),
        "memory-unpin": (f"{mem_page}unpin/", mem_page),
        "memory-invalidate": (f"{mem_page}invalidate/", mem_page),
        "memory-forget": (f"{mem_page}forget/", mem_page),
        "conflict-republish": (f"/conflicts/{memory}/{other}/republish/", "/conflicts/"),
        "conflict-invalidate": (f"/conflicts/{memory}/{other}/invalidate/", "/conflicts/"),
        "ledger-verify": ("/ledger/verify/", "/ledger/"),
        "key-create": ("/keys/create/", "/keys/"),
        "key-revoke": (f"/keys/{org.acme_key.uid}/revoke/", "/keys/"),
        "user-create": ("/users/create/", "/users/"),
        "user-grant": ("/users/grants/", "/users/"),
        "user-grant-revoke": ("/users/grants/revoke/", "/users/"),
        "logout": ("/logout/", "/"),
    }


POST_ONLY = [
    "scope-publish",
    "memory-correct",
    "memory-republish",
    "memory-pin",
    "memory-unpin",
    "memory-invalidate",
    "memory-forget",
    "conflict-republish",
    "conflict-invalidate",
    "ledger-verify",
    "key-create",
    "key-revoke",
    "user-create",
    "user-grant",
    "user-grant-revoke",
    "logout",
]


ACTION_ENDINGS = (
    "publish",
    "correct",
    "pin",
    "invalidate",
    "forget",
    "revoke",
    "create",
    "grant",
    "verify",
    "logout",
)


@pytest.mark.parametrize("name", POST_ONLY)
def test_a_get_of_an_action_address_is_sent_to_its_page(client, users, org, policy, name):
    path, page = _routes(org, policy)[name]
    login(client, users.su)
    writes_before = (LedgerEvent.objects.count(), Memory.objects.count())
    response = client.get(path)
    assert response.status_code == 303 and response["Location"] == page
    assert client.get(page).status_code == 200
    assert (LedgerEvent.objects.count(), Memory.objects.count()) == writes_before
    assert not AccessLog.objects.filter(outcome__gte=400).exists()


@pytest.mark.parametrize("name", ["memory-pin", "key-revoke", "scope-publish"])
def test_other_methods_on_an_action_address_stay_405(client, users, org, policy, name):
    path, _ = _routes(org, policy)[name]
    response = login(client, users.su).put(path)
    assert response.status_code == 405 and "POST" in response["Allow"]


def test_anonymous_get_of_an_action_address_ends_at_the_login(client, users, org, policy):
    path, page = _routes(org, policy)["memory-pin"]
    response = client.get(path, follow=True)
    assert response.redirect_chain[0] == (page, 303)
    assert response.redirect_chain[-1][0].startswith("/login/")
    assert not Memory.objects.get(pk=policy.pk).pinned


def test_every_post_only_console_route_is_covered(org, policy):
    # A new action address joins the list above (and so gets its GET answer tested).
    names = {
        pattern.name
        for pattern in get_resolver("memory_console.console.urls").url_patterns
        if pattern.name and any(pattern.name.endswith(end) for end in ACTION_ENDINGS)
    }
    assert names <= set(POST_ONLY)
