"""An erased actor stays erased (docs/agents/api.md, "Actors"): every write naming the ref answers
410 and
writes nothing, from any key, REST or MCP, until a superuser reopens the ref in the console.
A write already past the services' check when the erasure began is refused by the database
(migration 0022's triggers), and answered the same way.
"""

import json

import pytest
from django.db import DatabaseError, connection, transaction

from memory_core import erasure, turns, writes
from memory_core.accounts import keys
from memory_core.errors import Gone
from memory_core.models import AccessLog, Actor, Digest, LedgerEvent, Memory, Message, Thread
from tests.helpers import bearer, login
from tests.mcp_wire import ACCEPT, envelope

WRITES = [
    ("/api/v1/turns", {"actor": "u1", "run_id": "after"}),
    ("/api/v1/memories", {"actor": "u1", "key": "tz", "fact": "works in CET"}),
    ("/api/v1/threads/t-after/messages", {"actor": "u1", "role": "user", "text": "hello"}),
]


@pytest.fixture
def erased(org, users):
    writes.remember(org.u1, "tz", "works in UTC", principal=org.acme_agent)
    erasure.erase_actor(org.u1, principal=users.p_owner)
    return Actor.objects.get(pk=org.u1.pk)


def _counts():
    return (
        Digest.objects.count(),
        Memory.objects.count(),
        Thread.objects.count(),
        Message.objects.count(),
    )


@pytest.mark.parametrize("path,body", WRITES)
def test_every_write_naming_an_erased_actor_is_410_and_writes_nothing(
    client, org, erased, path, body
):
    before = _counts()
    for secret in (org.acme_secret, org.global_secret):
        named = dict(body, actor="u1" if secret == org.acme_secret else "acme/u1")
        answer = client.post(path, named, content_type="application/json", headers=bearer(secret))
        assert answer.status_code == 410, answer.content
        assert answer.json() == {"detail": f"actor {named['actor']!r} was erased"}
    assert _counts() == before
    refused = AccessLog.objects.filter(outcome=410, actor_ref="acme/u1")
    assert refused.count() == 2


def test_a_put_of_an_erased_actor_is_410(client, org, erased):
    answer = client.put(
        "/api/v1/actors/u1",
        {"scopes": ["tenant:acme"], "display_name": "Back"},
        content_type="application/json",
        headers=bearer(org.acme_secret),
    )

    assert answer.status_code == 410
    assert Actor.objects.get(pk=erased.pk).display_name == ""


def test_mcp_writes_for_an_erased_actor_are_refused(client, org, erased):
    headers = {**bearer(org.acme_secret), "Accept": ACCEPT}
    call = envelope(
        "tools/call",
        {"name": "remember", "arguments": {"key": "tz", "fact": "works in CET"}},
    )
    answer = client.post(
        "/mcp/actors/u1/", json.dumps(call), content_type="application/json", headers=headers
    )

    result = answer.json()["result"]
    assert result["isError"] is True
    assert "erased" in result["content"][0]["text"]
    assert not Memory.objects.filter(scope=erased.scope).exists()


def test_a_key_bound_to_an_erased_actor_no_longer_authenticates(client, org, users, operator):
    _, secret = keys.create_api_key("session", org.acme, principal=operator, actor_ref="u1")
    erasure.erase_actor(org.u1, principal=users.p_owner)

    answer = client.post(
        "/api/v1/turns",
        {"actor": "u1", "run_id": "r"},
        content_type="application/json",
        headers=bearer(secret),
    )

    assert answer.status_code == 401


# Transactional: on the server a turn's store is one autocommitted statement, and the
# refusal's access-log row follows it; inside a test's transaction the refused insert would
# abort everything after it.
@pytest.mark.django_db(transaction=True)
def test_a_write_past_the_check_when_the_erasure_began_is_refused_by_the_database(org, erased):
    # The actor as a request read it before the erasure marked it.
    stale = Actor.objects.get(pk=erased.pk)
    stale.erased_at = None
    stale.membership_tokens = ["tenant:acme"]

    with pytest.raises(Gone):
        writes.remember(stale, "tz", "works in CET", principal=org.acme_agent)
    with pytest.raises(Gone):
        turns.resolve_turn(stale, "late-run", principal=org.acme_agent)
    assert not Memory.objects.filter(scope=erased.scope).exists()
    assert not Digest.objects.filter(actor=erased, run_id="late-run").exists()


def test_raw_sql_may_not_insert_a_row_naming_an_erased_actor(org, erased):
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            """INSERT INTO memory_core_thread (actor_id, ref, created_at)
               VALUES (%s, 'raw', now())""",
            [erased.pk],
        )


def test_a_superuser_reopens_an_erased_ref_and_writes_are_taken_again(client, org, users, erased):
    login(client, users.su)

    answer = client.post(f"/actors/{erased.ref}/reopen/")

    assert answer.status_code == 302
    assert Actor.objects.get(pk=erased.pk).erased_at is None
    assert LedgerEvent.objects.filter(kind="actor.reopened", actor_ref="acme/u1").count() == 1
    client.logout()
    turn = client.post(
        "/api/v1/turns",
        {"actor": "u1", "run_id": "again"},
        content_type="application/json",
        headers=bearer(org.acme_secret),
    )
    assert turn.status_code == 200


def test_a_tenant_administrator_may_not_reopen(client, org, users, erased):
    login(client, users.owner)

    answer = client.post(f"/actors/{erased.ref}/reopen/")

    assert answer.status_code == 403
    assert Actor.objects.get(pk=erased.pk).erased_at is not None
    assert not LedgerEvent.objects.filter(kind="actor.reopened").exists()


def test_the_actor_run_and_thread_pages_say_the_person_was_erased(client, org, users, operator):
    from memory_core import transcripts

    transcripts.record_message(org.u1, "t-1", "user", "hi", principal=org.acme_agent)
    turns.resolve_turn(org.u1, "r-1", principal=org.acme_agent, thread_id="t-1")
    erasure.erase_actor(org.u1, principal=users.p_owner)
    login(client, users.su)

    actor_page = client.get("/actors/acme/u1/").content.decode()
    run_page = client.get("/runs/acme/u1/r-1/").content.decode()
    thread_page = client.get("/threads/t-1/", {"actor": "acme/u1"})

    assert "was erased on" in actor_page and "Reopen this ref" in actor_page
    assert "erased on" in run_page and "no messages recorded" not in run_page
    assert thread_page.status_code == 200
    assert "was erased on" in thread_page.content.decode()
