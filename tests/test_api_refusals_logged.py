"""Every refused API call is access-logged, including those Ninja refuses before the
handler runs: a body that is not JSON, an unknown field (an agent asking for a wider
`scope`), a wrong type, a query parameter out of range. 401s stay unlogged."""

import json

import pytest
from django.urls import resolve

from memory_console.api import ACTIONS, api
from memory_core.models import AccessLog, Actor, Digest, LedgerEvent, Memory, Message
from tests.helpers import bearer

# (method, path, a valid body, the action its refusals are logged under)
BODY_ENDPOINTS = [
    ("post", "/api/v1/turns", {"actor": "u1", "run_id": "run_1"}, "turn"),
    ("post", "/api/v1/memories", {"actor": "u1", "key": "units", "fact": "miles"}, "remember"),
    ("put", "/api/v1/actors/u9", {"scopes": []}, "actor.put"),
    (
        "post",
        "/api/v1/threads/th_1/messages",
        {"actor": "u1", "role": "user", "text": "hello"},
        "message",
    ),
]


def _send(client, method, path, data, secret):
    return getattr(client, method)(
        path, data, content_type="application/json", headers=bearer(secret)
    )


def _nothing_written(ledger_before):
    assert not Memory.objects.exists()
    assert not Message.objects.exists()
    assert not Digest.objects.exists()
    assert not Actor.objects.filter(ref="acme/u9").exists()
    assert LedgerEvent.objects.count() == ledger_before


def _refusal(action, principal):
    rows = AccessLog.objects.filter(outcome__gte=400)
    assert [(r.action, r.outcome, r.principal, r.channel) for r in rows] == [
        (action, 422, principal, "api")
    ]
    return rows.get()


@pytest.mark.parametrize("method, path, body, action", BODY_ENDPOINTS)
def test_an_unknown_field_is_a_logged_422_that_writes_nothing(
    org, client, method, path, body, action
):
    ledger_before = LedgerEvent.objects.count()
    response = _send(client, method, path, {**body, "scope": "global"}, org.acme_secret)
    assert response.status_code == 422
    assert "unknown field: scope" in response.json()["detail"]
    row = _refusal(action, org.acme_key.principal)
    assert row.detail == {"reason": "invalid", "problems": ["extra_forbidden"]}
    _nothing_written(ledger_before)


@pytest.mark.parametrize("method, path, body, action", BODY_ENDPOINTS)
def test_a_body_that_is_not_json_is_a_logged_422_that_writes_nothing(
    org, client, method, path, body, action
):
    ledger_before = LedgerEvent.objects.count()
    response = _send(client, method, path, "{not json", org.acme_secret)
    assert response.status_code == 422
    assert response.json() == {"detail": "request body: not JSON"}
    row = _refusal(action, org.acme_key.principal)
    assert row.detail == {"reason": "invalid", "problems": ["json_invalid"]}
    _nothing_written(ledger_before)


def test_the_log_row_holds_nothing_of_the_rejected_body(org, client):
    secret_fact = "the-vault-code-is-4711"
    body = {"actor": "u1", "key": "vault", "fact": secret_fact, "scope": "tenant:acme"}
    assert _send(client, "post", "/api/v1/memories", body, org.acme_secret).status_code == 422
    row = _refusal("remember", org.acme_key.principal)
    logged = json.dumps([row.actor_ref, row.scope, row.memory_ids, row.detail])
    assert secret_fact not in logged and "vault" not in logged and "tenant:acme" not in logged


def test_a_query_parameter_out_of_range_is_logged_under_its_operation(org, client):
    response = client.get(
        "/api/v1/memories", {"actor": "u1", "limit": 0}, headers=bearer(org.acme_secret)
    )
    assert response.status_code == 422
    _refusal("read_back", org.acme_key.principal)


@pytest.mark.parametrize("secret", [None, "mc_not_a_key"])
def test_a_malformed_body_without_a_valid_key_is_a_401_and_not_logged(org, client, secret):
    logged_before = AccessLog.objects.count()
    response = _send(client, "post", "/api/v1/memories", "{not json", secret)
    assert response.status_code == 401
    assert AccessLog.objects.count() == logged_before


def test_every_operation_has_its_access_log_action():
    for prefix, router in api._routers:
        for path, path_view in router.path_operations.items():
            url = "/api/v1" + (prefix + path).replace("{", "").replace("}", "")
            name = resolve(url.replace("//", "/")).url_name
            for operation in path_view.operations:
                if operation.auth_callbacks:
                    for method in operation.methods:
                        assert (method, name) in ACTIONS, (method, url)


def test_json_nested_too_deep_to_parse_is_a_logged_422(org, client):
    body = "[" * 10_000 + "]" * 10_000
    response = _send(client, "post", "/api/v1/memories", body, org.acme_secret)
    assert response.status_code == 422
    _refusal("remember", org.acme_key.principal)
