"""/actors, /threads and /health over HTTP, and the API's behaviour when the database is down."""

import pytest
from django.db import OperationalError

from memory_core.accounts import keys
from memory_core.models import AccessLog, Actor, LedgerEvent, Message, Scope, Thread
from tests.helpers import bearer

ACTORS = "/api/v1/actors"


def put_actor(client, secret, ref, body):
    return client.put(
        f"{ACTORS}/{ref}", body, content_type="application/json", headers=bearer(secret)
    )


def post_message(client, secret, thread_id, body):
    return client.post(
        f"/api/v1/threads/{thread_id}/messages",
        body,
        content_type="application/json",
        headers=bearer(secret),
    )


# --- PUT /actors/{ref} ------------------------------------------------------------------


def test_put_creates_an_actor_and_unknown_scopes_under_the_keys_reach(org, client):
    body = {"display_name": "Night Owl", "scopes": ["squad:night", "team:support"]}
    response = put_actor(client, org.acme_secret, "u7", body)
    assert response.status_code == 200
    assert response.json() == {
        "ref": "u7",
        "display_name": "Night Owl",
        "scopes": [
            "actor:acme/u7",
            "squad:acme/night",
            "team:acme/support",
            "tenant:acme",
            "global",
        ],
    }
    night = Scope.objects.get(token="squad:acme/night")
    support = Scope.objects.get(token="team:acme/support")
    assert night.parent == support and support.parent == org.acme
    assert LedgerEvent.objects.filter(kind="actor.registered", actor_ref="acme/u7").exists()
    row = AccessLog.objects.get(action="actor.put", actor_ref="acme/u7")
    assert (row.outcome, row.scope, row.principal) == (200, "actor:acme/u7", org.acme_key.principal)


def test_put_updates_memberships_and_null_keeps_the_display_name(org, client):
    response = put_actor(client, org.acme_secret, "u1", {"display_name": None, "scopes": []})
    assert response.status_code == 200
    assert response.json() == {
        "ref": "u1",
        "display_name": "User One",
        "scopes": ["actor:acme/u1", "tenant:acme", "global"],
    }
    org.u1.refresh_from_db()
    assert org.u1.display_name == "User One"


def test_put_with_a_scope_outside_the_keys_reach_is_403(org, client):
    response = put_actor(client, org.acme_secret, "u8", {"scopes": ["tenant:globex"]})
    assert response.status_code == 403 and "reach" in response.json()["detail"]
    assert not Actor.objects.filter(ref="acme/u8").exists()
    row = AccessLog.objects.get(action="actor.put", actor_ref="acme/u8")
    assert row.outcome == 403 and row.detail == {"reason": "forbidden"}


def test_put_of_an_actor_outside_the_keys_reach_is_404_and_changes_nothing(org, client):
    response = put_actor(
        client, org.globex_secret, "acme/u1", {"display_name": "hijack", "scopes": []}
    )
    assert response.status_code == 404
    assert response.json() == {"detail": "actor 'acme/u1' not found"}
    org.u1.refresh_from_db()
    assert org.u1.display_name == "User One"
    assert AccessLog.objects.filter(action="actor.put", outcome=404, actor_ref="acme/u1").exists()


@pytest.mark.parametrize(
    ("ref", "body", "needle"),
    [
        ("u9", {"scopes": [], "role": "admin"}, "unknown field: role"),
        ("u9", {"scopes": ["global"]}, "memberships only"),
        ("u9", {"scopes": ["actor:acme/u2"]}, "memberships only"),
        ("u9", {"scopes": ["Not A Scope"]}, "not a scope token"),
        ("u9", {"scopes": ["team:a", "team:a"]}, "listed twice"),
        ("u9", {"scopes": "team:a"}, "scopes"),
        ("u9", {"display_name": "x" * 201, "scopes": []}, "display_name"),
        ("u9", {}, "scopes: required"),
        ("-bad", {"scopes": []}, "actor ref"),
    ],
)
def test_malformed_put_is_422(org, client, ref, body, needle):
    response = put_actor(client, org.acme_secret, ref, body)
    assert response.status_code == 422 and needle in response.json()["detail"]
    assert not Actor.objects.filter(ref=ref).exists()


def test_put_without_a_valid_key_is_401(org, client, operator):
    assert put_actor(client, None, "u9", {"scopes": []}).status_code == 401
    assert put_actor(client, "mc_unknown", "u9", {"scopes": []}).status_code == 401
    keys.revoke_api_key(org.acme_key, principal=operator)
    assert put_actor(client, org.acme_secret, "u9", {"scopes": []}).status_code == 401
    assert not Actor.objects.filter(ref="acme/u9").exists()


# --- GET /actors/{ref} ------------------------------------------------------------------


def test_get_actor_returns_its_full_chain(org, client):
    response = client.get(f"{ACTORS}/u1", headers=bearer(org.acme_secret))
    assert response.status_code == 200
    assert response.json() == {
        "ref": "u1",
        "display_name": "User One",
        "scopes": ["actor:acme/u1", "team:acme/ops", "tenant:acme", "global"],
    }
    row = AccessLog.objects.get(action="actor.get")
    assert (row.outcome, row.actor_ref) == (200, "acme/u1")


def test_get_actor_outside_the_keys_reach_is_the_same_404_as_an_unknown_one(org, client):
    hidden = client.get(f"{ACTORS}/acme/u1", headers=bearer(org.globex_secret))
    unknown = client.get(f"{ACTORS}/acme/u0", headers=bearer(org.globex_secret))
    assert (hidden.status_code, unknown.status_code) == (404, 404)
    assert hidden.json() == {"detail": "actor 'acme/u1' not found"}
    assert unknown.json() == {"detail": "actor 'acme/u0' not found"}
    assert not Actor.objects.filter(ref="acme/u0").exists()
    row = AccessLog.objects.get(action="actor.lookup", actor_ref="acme/u1")
    assert (row.outcome, row.principal) == (404, org.globex_key.principal)


def test_get_actor_needs_a_valid_key_and_a_well_formed_ref(org, client, operator):
    assert client.get(f"{ACTORS}/u1").status_code == 401
    assert client.get(f"{ACTORS}/u1", headers=bearer("mc_nope")).status_code == 401
    assert client.get(f"{ACTORS}/-u1", headers=bearer(org.acme_secret)).status_code == 422
    keys.revoke_api_key(org.acme_key, principal=operator)
    assert client.get(f"{ACTORS}/u1", headers=bearer(org.acme_secret)).status_code == 401


# --- POST /threads/{thread_id}/messages -------------------------------------------------


def test_post_message_records_it_in_the_actors_thread(org, client):
    body = {"actor": "u1", "run_id": "run_1", "role": "user", "text": "I use the calendar year"}
    response = post_message(client, org.acme_secret, "thr_1", body)
    assert response.status_code == 201
    message = Message.objects.get()
    assert response.json() == {
        "id": message.uid,
        "thread_id": "thr_1",
        "run_id": "run_1",
        "role": "user",
        "created_at": message.created_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    assert message.thread.actor == org.u1 and message.text == "I use the calendar year"
    row = AccessLog.objects.get(action="message")
    assert row.outcome == 201 and row.detail == {"chars": 23, "role": "user"}
    assert "calendar" not in str(row.detail)


def test_a_memory_learned_in_a_recorded_thread_resolves_its_origin(org, client):
    note = {"actor": "u1", "key": "fiscal-year", "fact": "calendar year", "thread_id": "thr_1"}
    memory = client.post(
        "/api/v1/memories", note, content_type="application/json", headers=bearer(org.acme_secret)
    ).json()
    assert memory["origin"]["resolves"] is False
    post_message(client, org.acme_secret, "thr_1", {"actor": "u1", "role": "user", "text": "hi"})
    again = client.get(
        f"/api/v1/memories/{memory['id']}?actor=u1", headers=bearer(org.acme_secret)
    ).json()
    assert again["origin"]["resolves"] is True


def test_post_message_registers_an_actor_seen_for_the_first_time(org, client):
    body = {"actor": "u6", "role": "assistant", "text": "hello"}
    assert post_message(client, org.acme_secret, "thr_9", body).status_code == 201
    assert Thread.objects.get(ref="thr_9").actor.ref == "acme/u6"


@pytest.mark.parametrize(
    ("thread_id", "body", "needle"),
    [
        ("thr_1", {"actor": "u1", "role": "system", "text": "x"}, "role"),
        ("thr_1", {"actor": "u1", "role": "user", "text": "x", "scope": "g"}, "unknown field"),
        ("thr_1", {"actor": "u1", "role": "user"}, "text: required"),
        ("thr_1", {"actor": "u1", "role": "user", "text": "a\x00b"}, "NUL"),
        ("t" * 129, {"actor": "u1", "role": "user", "text": "x"}, "thread_id"),
        ("thr_1", {"actor": "u1", "role": "user", "text": "x", "run_id": "r" * 129}, "run_id"),
    ],
)
def test_malformed_message_is_422(org, client, thread_id, body, needle):
    response = post_message(client, org.acme_secret, thread_id, body)
    assert response.status_code == 422 and needle in response.json()["detail"]
    assert not Message.objects.exists()


def test_post_message_outside_the_keys_reach_is_404_and_without_a_key_401(org, client, operator):
    body = {"actor": "acme/u1", "role": "user", "text": "planted"}
    response = post_message(client, org.globex_secret, "thr_1", body)
    assert response.status_code == 404
    assert response.json() == {"detail": "actor 'acme/u1' not found"}
    assert post_message(client, None, "thr_1", body).status_code == 401
    assert post_message(client, "mc_nope", "thr_1", body).status_code == 401
    keys.revoke_api_key(org.acme_key, principal=operator)
    assert post_message(client, org.acme_secret, "thr_1", body).status_code == 401
    assert not Message.objects.exists()


# --- GET /health, and the database going away -------------------------------------------


def test_health_needs_no_key(db, client):
    response = client.get("/api/v1/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok"}


def test_health_is_503_with_json_when_the_database_is_unreachable(db, client, monkeypatch):
    class Unreachable:
        def cursor(self):
            raise OperationalError("connection refused")

    monkeypatch.setattr("memory_console.api.health.connection", Unreachable())
    response = client.get("/api/v1/health")
    assert response.status_code == 503
    assert response["Content-Type"].startswith("application/json")
    assert response.json() == {"status": "degraded", "database": "unreachable"}


def test_the_api_answers_503_json_not_a_traceback_while_the_database_is_down(
    org, client, monkeypatch
):
    def unreachable(secret):
        raise OperationalError("connection refused")

    monkeypatch.setattr("memory_core.accounts.keys.authenticate", unreachable)
    response = client.get(f"{ACTORS}/u1", headers=bearer(org.acme_secret))
    assert response.status_code == 503
    assert response.json() == {"detail": "the database is unavailable; try again shortly"}


def test_health_and_docs_are_routed_under_the_api(db, client):
    from django.urls import reverse

    assert reverse("api:health") == "/api/v1/health"
    assert client.get("/api/v1/docs").status_code == 200
    schema = client.get("/api/v1/openapi.json").json()
    assert "security" not in schema["paths"]["/api/v1/health"]["get"]
    assert schema["paths"]["/api/v1/turns"]["post"]["security"] == [{"ApiKeyBearer": []}]
