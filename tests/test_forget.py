"""forget: every version gone, every prompt-line copy scrubbed, ledger with ids only."""

import json
import threading

import pytest
from django.db import connection, connections, transaction

from memory_core import forgetting, turns, writes
from memory_core.actors import chain_of
from memory_core.errors import Forbidden, NotFound
from memory_core.models import AccessLog, Digest, DigestLine, LedgerEvent, Memory
from memory_core.recall import providers
from tests.roles import as_owner

SECRET = "they are allergic to penicillin"


def _database_contains(text: str) -> bool:
    """Search every text and JSON column of every table for `text` (as the owner: the
    server's role may not read every table)."""
    with as_owner(), connection.cursor() as cursor:
        cursor.execute(
            """SELECT table_name, column_name FROM information_schema.columns
               WHERE table_schema = 'public'
                 AND data_type IN ('text', 'character varying', 'jsonb', 'ARRAY')"""
        )
        for table, column in cursor.fetchall():
            cursor.execute(
                f'SELECT 1 FROM "{table}" WHERE "{column}"::text LIKE %s LIMIT 1', [f"%{text}%"]
            )
            if cursor.fetchone():
                return True
    return False


def _database_holds_vector_of(key: str, text: str) -> bool:
    """Search every vector column of every table for the vector `text` embeds to (what a
    version with this key and fact was given), or any vector within a hair of it."""
    embedder = providers.current()
    (vector,) = embedder.embed([embedder.document(key, text)]).tolist()
    with as_owner(), connection.cursor() as cursor:
        cursor.execute(
            """SELECT table_name, column_name FROM information_schema.columns
               WHERE table_schema = 'public' AND udt_name = 'vector'"""
        )
        columns = cursor.fetchall()
        assert columns, "no vector column found: the check would prove nothing"
        for table, column in columns:
            cursor.execute(
                f'SELECT 1 FROM "{table}" WHERE "{column}" <=> %s::float8[]::vector < 1e-6 LIMIT 1',
                [vector],
            )
            if cursor.fetchone():
                return True
    return False


@pytest.fixture
def chain_in_prompts(org, operator):
    writes.publish(org.root, "health", "no medical notes are kept", principal=operator)
    first = writes.remember(org.u1, "health", "penicillin: unsure", principal=org.acme_agent)
    second = writes.remember(org.u1, "health", SECRET, principal=org.acme_agent)
    turns.resolve_turn(org.u1, "run_1", principal=org.acme_agent)
    return first.memory, second.memory


def test_forget_erases_every_version_and_scrubs_stored_digests(org, chain_in_prompts):
    first, second = chain_in_prompts
    result = forgetting.forget_for_actor(second, org.u1, chain_of(org.u1), principal=org.acme_agent)
    assert set(result.memory_ids) == {first.uid, second.uid}
    assert not Memory.objects.filter(lineage=second.lineage).exists()
    assert _database_holds_vector_of("health", "no medical notes are kept")  # the check works
    assert not _database_contains(SECRET)
    assert not _database_contains("penicillin")
    assert not _database_holds_vector_of("health", SECRET)
    assert not _database_holds_vector_of("health", "penicillin: unsure")
    digest = Digest.objects.get(run_id="run_1")
    line = DigestLine.objects.get(digest=digest, memory_uid=second.uid)
    assert line.text == "[forgotten]" and line.memory is None
    assert "- [forgotten]" in digest.block.split("\n")
    # The wider policy the forgotten note overrode is still shown in the stored block.
    assert "no medical notes are kept" in digest.block
    replay = turns.resolve_turn(org.u1, "run_1", principal=org.acme_agent)
    assert replay.block == digest.block and SECRET not in json.dumps(replay.entries)


def test_forget_leaves_a_ledger_event_with_ids_and_counts_only(org, chain_in_prompts):
    first, second = chain_in_prompts
    forgetting.forget_for_actor(second, org.u1, chain_of(org.u1), principal=org.acme_agent)
    event = LedgerEvent.objects.get(kind="memory.forgotten")
    assert event.payload == {
        "memories": sorted([first.uid, second.uid]),
        "versions": 2,
        "digests": 1,
        "lines": 1,
    }
    for row in LedgerEvent.objects.all():
        assert "health" not in json.dumps(row.payload)
    row = AccessLog.objects.get(action="forget")
    assert row.outcome == 204 and row.count == 2


def test_forget_of_wider_scope_is_403_and_of_invisible_is_404(org, operator):
    policy = writes.publish(org.acme, "units", "kilometres", principal=operator)
    other = writes.remember(org.u2, "units", "miles", principal=org.acme_agent).memory
    chain = chain_of(org.u1)
    with pytest.raises(Forbidden):
        forgetting.forget_for_actor(policy, org.u1, chain, principal=org.acme_agent)
    with pytest.raises(NotFound):
        forgetting.forget_for_actor(other, org.u1, chain, principal=org.acme_agent)
    assert Memory.objects.filter(pk__in=[policy.pk, other.pk]).count() == 2
    outcomes = sorted(AccessLog.objects.filter(action="forget").values_list("outcome", flat=True))
    assert outcomes == [403, 404]


def test_console_forget_needs_admin_of_the_scope(org, users):
    policy = writes.publish(org.acme, "units", "kilometres", principal=users.p_owner)
    with pytest.raises(Forbidden):
        forgetting.forget(policy, principal=users.p_auditor)
    with pytest.raises(Forbidden):
        forgetting.forget(policy, principal=users.p_outsider)
    forgetting.forget(policy, principal=users.p_owner)
    assert not Memory.objects.filter(pk=policy.pk).exists()


def test_forgetting_a_promoted_original_keeps_the_republished_copy(org, users):
    agent = writes.remember(org.u1, "units", "miles", principal=org.acme_agent).memory
    copy = writes.promote(agent, org.acme, principal=users.p_owner)
    forgetting.forget(agent, principal=users.p_owner)
    copy.refresh_from_db()
    assert copy.promoted_from is None and copy.text == "miles"


def test_the_forget_confirmation_and_the_api_docs_say_what_a_forget_leaves(client, users, org):
    """Messages and stored turn queries that mention the fact stay until pruned; both the
    console's confirmation and the API's description say so."""
    note = writes.remember(org.u1, "tz", "works in CET", principal=org.acme_agent).memory
    client.force_login(users.owner)
    page = client.get(f"/memories/{note.uid}/").text
    assert "What a forget leaves" in page and "prune_history" in page
    schema = client.get("/api/v1/openapi.json").json()
    forget = schema["paths"]["/api/v1/memories/{memory_id}"]["delete"]
    assert "prune_history" in forget["description"] and "erases the person" in forget["description"]


@pytest.mark.django_db(transaction=True)
def test_a_forget_waits_for_a_turn_in_flight_then_scrubs_the_digest_it_stored(org, operator):
    """A turn's write locks every memory it shows until it commits (turns.STORE_TURN's
    `held`); a forget of one of them waits for that commit and then finds and scrubs the
    stored line, leaving no line that names a deleted memory."""
    units = writes.publish(org.acme, "units", "miles", principal=operator)
    stored, release, forgotten = threading.Event(), threading.Event(), threading.Event()
    failures = []

    def turn_held_open():
        try:
            with transaction.atomic():
                turns.resolve_turn(org.u1, "run-in-flight", principal=org.acme_agent)
                stored.set()
                release.wait(30)
        except Exception as exc:  # reported below
            failures.append(exc)
            stored.set()
        finally:
            connections.close_all()

    def forget():
        try:
            forgetting.forget(Memory.objects.get(pk=units.pk), principal=operator)
            forgotten.set()
        except Exception as exc:
            failures.append(exc)
        finally:
            connections.close_all()

    turn_thread = threading.Thread(target=turn_held_open)
    turn_thread.start()
    assert stored.wait(30)
    forget_thread = threading.Thread(target=forget)
    forget_thread.start()
    assert not forgotten.wait(1.0), "forget went ahead while the turn showing it was open"
    release.set()
    turn_thread.join(30)
    forget_thread.join(30)
    assert failures == []
    assert forgotten.is_set()
    line = DigestLine.objects.get(digest__run_id="run-in-flight", memory_uid=units.uid)
    assert line.memory_id is None and line.text == "[forgotten]"
    assert "miles" not in Digest.objects.get(run_id="run-in-flight").block
    assert not Memory.objects.filter(lineage=units.lineage).exists()
