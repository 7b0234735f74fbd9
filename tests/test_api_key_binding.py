"""A key bound to one actor (`create_api_key --actor REF`): it acts for that actor alone.

The actor is decided by whoever made the key, never by a request: in the REST API any other
actor ref is the 404 of an actor outside the reach (access-logged as `actor.lookup`), and
nothing is looked up, registered or written for it. The database holds the binding inside
the key's reach and refuses to change it once the secret is out.
"""

import io
import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import InternalError, transaction

from memory_core import actors, writes
from memory_core.accounts import keys
from memory_core.accounts.principals import Principal
from memory_core.errors import NotFound
from memory_core.models import AccessLog, Actor, ApiKey, Digest, LedgerEvent, Memory, Scope
from tests.helpers import bearer, login, post_turn


@pytest.fixture
def bound(org, operator):
    """A key of tenant:acme bound to acme/u1, and its secret."""
    key, secret = keys.create_api_key("u1's desktop", org.acme, principal=operator, actor_ref="u1")
    return key, secret


def _run(*args):
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


# --- making one --------------------------------------------------------------------------


def test_create_api_key_binds_the_key_and_records_the_actor(org, bound):
    key, secret = bound
    assert key.actor == org.u1
    assert keys.authenticate(secret).bound_ref == "acme/u1"
    event = LedgerEvent.objects.get(kind="api_key.created", payload__api_key=key.uid)
    assert event.actor_ref == "acme/u1" and event.payload == {
        "api_key": key.uid,
        "reach": "tenant:acme",
    }
    row = AccessLog.objects.get(action="api_key.create", detail__api_key=key.uid)
    assert row.outcome == 201 and row.actor_ref == "acme/u1"


def test_an_unbound_key_reads_as_unbound(org):
    assert keys.authenticate(org.acme_secret).bound_ref is None
    assert actors.bound_ref(org.acme_key) is None


@pytest.mark.parametrize("named", ["u1", "acme/u1"])
def test_the_command_binds_to_a_ref_named_relative_or_qualified(org, named):
    out = _run("create_api_key", "--name", "desk", "--reach", "tenant:acme", "--actor", named)
    secret = out.splitlines()[-1]
    key = keys.authenticate(secret)
    assert key.actor_id == org.u1.pk and key.reach == org.acme
    assert "bound to the actor acme/u1" in out
    assert "actor:acme/u1, team:acme/ops, tenant:acme, global" in out


def test_the_command_registers_an_unknown_actor_as_the_keys_first_call_would(org):
    out = _run("create_api_key", "--name", "desk", "--reach", "tenant:acme", "--actor", "u7")
    key = keys.authenticate(out.splitlines()[-1])
    assert key.actor.ref == "acme/u7"
    assert actors.chain_of(key.actor) == ("actor:acme/u7", "tenant:acme", "global")
    assert AccessLog.objects.filter(action="actor.register", actor_ref="acme/u7").count() == 1


@pytest.mark.parametrize(
    "named, reach",
    [
        ("globex/x9", "tenant:acme"),  # another tenant's actor, named qualified
        ("u2", "team:acme/ops"),  # acme/u2 is in acme, but not in team ops
        ("acme/u2", "team:acme/ops"),
    ],
)
def test_the_command_refuses_an_actor_outside_the_reach_and_makes_nothing(org, named, reach):
    keys_before, actors_before = ApiKey.objects.count(), Actor.objects.count()
    events_before = LedgerEvent.objects.count()
    with pytest.raises(CommandError, match=rf"actor '{re.escape(named)}' not found within"):
        _run("create_api_key", "--name", "desk", "--reach", reach, "--actor", named)
    assert ApiKey.objects.count() == keys_before and Actor.objects.count() == actors_before
    assert LedgerEvent.objects.count() == events_before
    refusal = AccessLog.objects.get(action="api_key.create", outcome=404)
    assert refusal.detail == {"reason": "reach"} and refusal.channel == "cli"


def test_the_service_refuses_an_actor_outside_the_reach(org, operator):
    with pytest.raises(NotFound):
        keys.create_api_key("k", org.globex, principal=operator, actor_ref="acme/u1")
    assert not ApiKey.objects.filter(name="k").exists()


def test_a_global_key_binds_to_a_qualified_ref(org, operator):
    key, _ = keys.create_api_key("k", org.root, principal=operator, actor_ref="globex/x9")
    assert key.actor == org.x9


# --- the REST API --------------------------------------------------------------------------


@pytest.mark.parametrize("named", ["u1", "acme/u1"])
def test_a_bound_key_acts_for_its_actor(client, org, bound, named):
    _, secret = bound
    answer = post_turn(client, secret, {"actor": named, "run_id": "r1"})
    assert answer.status_code == 200 and answer.json()["scopes"][0] == "actor:acme/u1"
    got = client.get(f"/api/v1/actors/{named}", headers=bearer(secret))
    assert got.status_code == 200


def test_a_bound_key_reaches_no_other_actor_and_logs_the_lookup(client, org, bound):
    _, secret = bound
    digests, memories = Digest.objects.count(), Memory.objects.count()
    auth = bearer(secret)
    answers = [
        post_turn(client, secret, {"actor": "u2", "run_id": "r1"}),
        client.post(
            "/api/v1/memories",
            {"actor": "u2", "key": "tone", "fact": "formal"},
            content_type="application/json",
            headers=auth,
        ),
        client.get("/api/v1/memories", {"actor": "u2"}, headers=auth),
        client.get("/api/v1/memories/search", {"actor": "u2", "q": "x"}, headers=auth),
        client.get("/api/v1/actors/u2", headers=auth),
    ]
    for answer in answers:
        assert answer.status_code == 404
        assert answer.json() == {"detail": "actor 'u2' not found"}
    assert Digest.objects.count() == digests and Memory.objects.count() == memories
    rows = AccessLog.objects.filter(action="actor.lookup", principal=f"key:{bound[0].prefix}")
    assert rows.count() == len(answers)
    assert {(r.outcome, r.actor_ref, r.detail["reason"]) for r in rows} == {
        (404, "acme/u2", "reach")
    }


def test_a_bound_key_registers_nobody(client, org, bound):
    _, secret = bound
    answer = post_turn(client, secret, {"actor": "u9", "run_id": "r1"})
    assert answer.status_code == 404 and answer.json() == {"detail": "actor 'u9' not found"}
    assert not Actor.objects.filter(ref="acme/u9").exists()
    assert not AccessLog.objects.filter(action="actor.register").exclude(actor_ref="acme/u1")


def test_a_bound_key_cannot_put_another_actor(client, org, bound):
    _, secret = bound
    answer = client.put(
        "/api/v1/actors/u2",
        {"scopes": []},
        content_type="application/json",
        headers=bearer(secret),
    )
    assert answer.status_code == 404 and answer.json() == {"detail": "actor 'u2' not found"}
    assert actors.chain_of(Actor.objects.get(ref="acme/u2")) == (
        "actor:acme/u2",
        "tenant:acme",
        "global",
    )
    row = AccessLog.objects.get(action="actor.put", outcome=404)
    assert row.actor_ref == "acme/u2" and row.detail == {"reason": "reach"}


def test_a_bound_key_is_refused_once_its_actor_leaves_the_reach(client, org, operator):
    key, secret = keys.create_api_key("ops desk", org.ops, principal=operator, actor_ref="u1")
    actors.put_actor("u1", None, ["tenant:acme"], org.acme_key, org.acme_agent)
    answer = post_turn(client, secret, {"actor": "u1", "run_id": "r1"})
    assert answer.status_code == 404
    assert AccessLog.objects.filter(action="actor.lookup", outcome=404, actor_ref="acme/u1")


def test_memories_written_through_a_bound_key_are_the_actors(client, org, bound):
    _, secret = bound
    answer = client.post(
        "/api/v1/memories",
        {"actor": "u1", "key": "tone", "fact": "prefers short answers"},
        content_type="application/json",
        headers=bearer(secret),
    )
    assert answer.status_code == 201 and answer.json()["scope"] == "actor:acme/u1"


# --- the database ----------------------------------------------------------------------------


def _insert_key(reach, actor, prefix):
    return ApiKey.objects.create(
        name="raw", prefix=prefix, secret_hash="0" * 64, reach=reach, actor=actor
    )


def test_the_database_refuses_a_key_bound_outside_its_reach(org):
    with pytest.raises(InternalError, match="outside its reach"):
        with transaction.atomic():
            _insert_key(org.globex, org.u1, "rawrawraw1")
    assert not ApiKey.objects.filter(prefix="rawrawraw1").exists()


def test_the_database_holds_the_binding_to_the_reach_rule(org):
    """The trigger's SQL is the reach rule (actors.key_reaches) once more: held together over
    every actor and every scope of the fixture."""
    scopes = list(Scope.objects.all())
    for actor in (org.u1, org.u2, org.x9):
        for n, scope in enumerate(scopes):
            prefix = f"r{actor.pk}x{n}"[:16]
            try:
                with transaction.atomic():
                    _insert_key(scope, actor, prefix)
                accepted = True
            except InternalError:
                accepted = False
            assert accepted == actors.key_reaches(actor, scope), (actor.ref, scope.token)


def test_the_binding_and_the_reach_cannot_change_once_made(org, bound):
    key, _ = bound
    with pytest.raises(InternalError, match="Cannot update"):
        with transaction.atomic():
            ApiKey.objects.filter(pk=key.pk).update(actor=org.u2)
    with pytest.raises(InternalError, match="Cannot update"):
        with transaction.atomic():
            ApiKey.objects.filter(pk=key.pk).update(reach=org.root)
    with pytest.raises(InternalError, match="Cannot update"):
        with transaction.atomic():
            ApiKey.objects.filter(pk=key.pk).update(actor=None)
    keys.revoke_api_key(key, principal=Principal.system("cli:test"))  # revoking still works
    key.refresh_from_db()
    assert key.actor == org.u1 and key.revoked_at is not None


# --- the console -----------------------------------------------------------------------------


def test_the_keys_page_shows_the_bound_actor(client, users, org, bound):
    key, _ = bound
    text = login(client, users.su).get("/keys/").text
    row = re.search(rf'<tr id="key-{key.uid}".*?</tr>', text, re.S).group(0)
    assert 'bound to <a href="/actors/acme/u1/">acme/u1</a>' in row
    other = re.search(rf'<tr id="key-{org.acme_key.uid}".*?</tr>', text, re.S).group(0)
    assert "bound to" not in other


def test_memories_of_a_bound_actor_are_untouched_by_refusals(client, org, bound, operator):
    memory = writes.remember(org.u2, "tone", "formal", principal=org.acme_agent).memory
    _, secret = bound
    gone = client.delete(f"/api/v1/memories/{memory.uid}?actor=u2", headers=bearer(secret))
    assert gone.status_code == 404
    assert Memory.objects.filter(uid=memory.uid).exists()
