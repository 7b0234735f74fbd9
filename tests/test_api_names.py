"""Names are per tenant (docs/architecture/rules.md, "Names are per tenant", docs/agents/api.md):
one tenant can neither squat, block nor
discover another's actor refs and team names."""

import pytest
from django.db import InternalError, connection, transaction

from memory_core import actors
from memory_core.accounts import keys
from memory_core.models import AccessLog, Actor, Membership, Memory, Scope
from tests.helpers import bearer

JANE = "jane.doe@example.com"


def turn(client, secret, actor, run_id="r1"):
    return client.post(
        "/api/v1/turns",
        {"actor": actor, "run_id": run_id},
        content_type="application/json",
        headers=bearer(secret),
    )


def put(client, secret, ref, scopes, display_name=None):
    return client.put(
        f"/api/v1/actors/{ref}",
        {"display_name": display_name, "scopes": scopes},
        content_type="application/json",
        headers=bearer(secret),
    )


def test_a_ref_registered_by_one_tenant_is_still_free_in_another(org, client):
    first = turn(client, org.globex_secret, JANE)
    assert first.status_code == 200
    assert first.json()["scopes"] == [f"actor:globex/{JANE}", "tenant:globex", "global"]

    second = turn(client, org.acme_secret, JANE)
    assert second.status_code == 200
    body = second.json()
    assert body["actor"] == JANE  # echoed as sent
    assert body["scopes"] == [f"actor:acme/{JANE}", "tenant:acme", "global"]
    assert set(Actor.objects.filter(ref__endswith=JANE).values_list("ref", flat=True)) == {
        f"globex/{JANE}",
        f"acme/{JANE}",
    }


def test_two_tenants_numbering_users_alike_keep_separate_memories(org, client):
    for secret, fact in ((org.acme_secret, "likes tea"), (org.globex_secret, "likes coffee")):
        written = client.post(
            "/api/v1/memories",
            {"actor": "1", "key": "drink", "fact": fact},
            content_type="application/json",
            headers=bearer(secret),
        )
        assert written.status_code == 201
    acme = client.get("/api/v1/memories", {"actor": "1"}, headers=bearer(org.acme_secret)).json()
    assert [item["text"] for item in acme["items"]] == ["likes tea"]
    assert acme["items"][0]["scope"] == "actor:acme/1"
    assert Memory.objects.filter(scope__token="actor:globex/1", text="likes coffee").exists()


def test_another_tenants_actor_answers_exactly_like_one_that_does_not_exist(org, client):
    """No existence oracle: globex cannot tell acme's u1 (real) from acme's ghost (unknown)."""
    auth = bearer(org.globex_secret)
    for ref in ("acme/u1", "acme/ghost"):
        got = client.get(f"/api/v1/actors/{ref}", headers=auth)
        assert (got.status_code, got.json()) == (404, {"detail": f"actor {ref!r} not found"})
        taken = turn(client, org.globex_secret, ref)
        assert (taken.status_code, taken.json()) == (404, {"detail": f"actor {ref!r} not found"})
        listed = client.get("/api/v1/memories", {"actor": ref}, headers=auth)
        assert (listed.status_code, listed.json()) == (404, {"detail": f"actor {ref!r} not found"})
    # ... and an unqualified name is globex's own: acme's u1 exists, yet globex's u1 is new.
    fresh = turn(client, org.globex_secret, "u1")
    assert fresh.status_code == 200
    assert fresh.json()["scopes"] == ["actor:globex/u1", "tenant:globex", "global"]
    assert not Actor.objects.filter(ref="acme/ghost").exists()
    refusals = AccessLog.objects.filter(principal=org.globex_key.principal, outcome=404)
    assert refusals.count() == 6


def test_team_names_are_per_tenant_so_neither_tenant_blocks_the_other(org, client):
    assert put(client, org.globex_secret, "x1", ["team:newteam"]).status_code == 200
    answer = put(client, org.acme_secret, "u3", ["team:newteam"])
    assert answer.status_code == 200
    assert answer.json()["scopes"] == [
        "actor:acme/u3",
        "team:acme/newteam",
        "tenant:acme",
        "global",
    ]
    assert Scope.objects.get(token="team:globex/newteam").parent == org.globex
    assert Scope.objects.get(token="team:acme/newteam").parent == org.acme


@pytest.mark.parametrize("token", ["team:acme/ops", "team:acme/not-yet", "tenant:acme"])
def test_another_tenants_scope_is_403_whether_or_not_it_exists(org, client, token):
    before = Scope.objects.count()
    answer = put(client, org.globex_secret, "x2", [token])
    assert answer.status_code == 403
    assert answer.json() == {"detail": f"scope {token!r} lies outside this key's reach"}
    assert Scope.objects.count() == before
    assert not Actor.objects.filter(ref="globex/x2").exists()


def test_the_qualified_form_is_accepted_inside_the_own_tenant(org, client):
    answer = put(client, org.acme_secret, "acme/u1", ["team:acme/ops", "tenant:acme"])
    assert answer.status_code == 200
    assert answer.json()["ref"] == "acme/u1"
    assert answer.json()["scopes"] == ["actor:acme/u1", "team:acme/ops", "tenant:acme", "global"]
    got = client.get("/api/v1/actors/acme/u1", headers=bearer(org.acme_secret))
    assert got.status_code == 200 and got.json()["ref"] == "acme/u1"


def test_a_global_key_names_actors_qualified(org, client):
    auth = bearer(org.global_secret)
    got = client.get("/api/v1/actors/acme/u1", headers=auth)
    assert got.status_code == 200
    assert got.json()["scopes"] == ["actor:acme/u1", "team:acme/ops", "tenant:acme", "global"]
    # A bare ref is an actor outside every tenant, not acme's u1.
    assert client.get("/api/v1/actors/u1", headers=auth).status_code == 404
    outside = turn(client, org.global_secret, "u1")
    assert outside.json()["scopes"] == ["actor:u1", "global"]
    inside = turn(client, org.global_secret, "acme/u9")
    assert inside.json()["scopes"] == ["actor:acme/u9", "tenant:acme", "global"]


def test_a_global_key_cannot_mix_tenants_in_one_chain(org, client):
    answer = put(client, org.global_secret, "acme/u1", ["tenant:globex"])
    assert answer.status_code == 422
    assert "not in that tenant" in answer.json()["detail"]
    answer = put(client, org.global_secret, "u5", ["tenant:acme"])
    assert answer.status_code == 422
    assert "outside every tenant" in answer.json()["detail"]
    assert not Actor.objects.filter(ref="u5").exists()
    assert actors.chain_of(Actor.objects.get(ref="acme/u1"))[1] == "team:acme/ops"


def test_a_team_named_inside_a_tenant_created_by_a_global_key_hangs_under_that_tenant(org, client):
    answer = put(client, org.global_secret, "acme/u6", ["team:acme/night"])
    assert answer.status_code == 200
    assert Scope.objects.get(token="team:acme/night").parent == org.acme


def test_a_key_bound_to_one_actor_registers_nobody_else(org, client, operator):
    _, secret = keys.create_api_key("u1 only", org.u1.scope, principal=operator)
    answer = turn(client, secret, "u2-new")
    assert answer.status_code == 404
    assert not Actor.objects.filter(ref="acme/u2-new").exists()
    assert turn(client, secret, "u1").status_code == 200


def test_the_database_refuses_a_scope_outside_its_tenant(org):
    with pytest.raises(InternalError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO memory_core_scope (token, label, parent_id, stream, created_at)"
            " VALUES ('team:globex/spy', '', %s, 'tenant:acme', now())",
            [org.acme.id],
        )
    with pytest.raises(InternalError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "UPDATE memory_core_scope SET parent_id = %s WHERE token = 'team:acme/ops'",
            [org.globex.id],
        )
    assert Scope.objects.get(token="team:acme/ops").parent == org.acme


def test_the_database_refuses_a_membership_in_another_tenant(org):
    with pytest.raises(InternalError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO memory_core_membership (actor_id, scope_id, rank) VALUES (%s, %s, 9)",
            [org.u1.id, org.globex.id],
        )
    assert not Membership.objects.filter(actor=org.u1, scope=org.globex).exists()


def test_a_malformed_ref_of_any_length_is_refused_and_logged_without_it(org):
    from memory_core.errors import Invalid

    for ref in ("x" * 300, "a/b/c", "../u1"):
        with pytest.raises(Invalid):
            actors.actor_for_key(ref, org.acme_key, org.acme_agent, register=True)
    rows = AccessLog.objects.filter(action="actor.lookup", outcome=422)
    assert rows.count() == 3 and set(rows.values_list("actor_ref", flat=True)) == {None}
