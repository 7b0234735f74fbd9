"""erase_actor: everything held about one person goes; the ledger keeps counts only."""

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from memory_core import erasure, transcripts, turns, writes
from memory_core.accounts import keys
from memory_core.errors import Forbidden
from memory_core.models import (
    AccessLog,
    Actor,
    ApiKey,
    Digest,
    DigestLine,
    Embedding,
    LedgerEvent,
    Memory,
    Message,
    Thread,
)
from tests.roles import as_owner

# Distinctive strings, one per path by which text about the person reaches the database.
FACT = "zq-fact allergic to quinine"
FACT_V2 = "zq-fact allergic to quinine and sulfa"
KEY = "zqhealth"
HUMAN_NOTE = "zq-note prefers morning calls"
MESSAGE_USER = "zq-user my address is 12 Birch Lane"
MESSAGE_AGENT = "zq-agent noted the Birch Lane address"
QUERY = "zq-query what am I allergic to"
ORG_POLICY = "acme support closes at six"
PERSONAL = [FACT, FACT_V2, KEY, HUMAN_NOTE, MESSAGE_USER, MESSAGE_AGENT, QUERY, "zq-", "User One"]


def _tables_holding(text: str) -> list[str]:
    """Every table.column (text, varchar, JSON, arrays) holding `text`, read as the owner:
    the server's role may not read every table."""
    found = []
    with as_owner(), connection.cursor() as cursor:
        cursor.execute(
            """SELECT table_name, column_name FROM information_schema.columns
               WHERE table_schema = 'public'
                 AND data_type IN ('text', 'character varying', 'jsonb', 'json', 'ARRAY')"""
        )
        for table, column in cursor.fetchall():
            cursor.execute(
                f'SELECT 1 FROM "{table}" WHERE "{column}"::text LIKE %s LIMIT 1', [f"%{text}%"]
            )
            if cursor.fetchone():
                found.append(f"{table}.{column}")
    return found


@pytest.fixture
def person(org, users, operator):
    """u1's history through every path: facts (two versions), a note a person published at
    u1's scope, a conversation, turns that carried the facts and asked a query, a bound key."""
    writes.publish(org.acme, "support", ORG_POLICY, principal=operator)
    agent = org.acme_agent
    for role, text in (("user", MESSAGE_USER), ("assistant", MESSAGE_AGENT)):
        transcripts.record_message(org.u1, "t-1", role, text, principal=agent, run_id="r-1")
    writes.remember(org.u1, KEY, FACT, principal=agent, run_id="r-1", thread_id="t-1")
    turns.resolve_turn(org.u1, "r-2", principal=agent, thread_id="t-1", query=QUERY)
    writes.remember(org.u1, KEY, FACT_V2, principal=agent, run_id="r-2", thread_id="t-1")
    writes.publish(org.u1.scope, "calls", HUMAN_NOTE, principal=users.p_owner)
    turns.resolve_turn(org.u1, "r-3", principal=agent, query=QUERY)
    bound = keys.create_api_key("u1 desktop", org.acme, principal=operator, actor_ref="u1")
    # u2 is not erased: their history stays.
    writes.remember(org.u2, "tz", "u2 works in CET", principal=agent)
    transcripts.record_message(org.u2, "t-9", "user", "u2 says hello", principal=agent)
    return bound


def test_after_erasure_no_table_holds_text_the_actor_wrote_or_was_told(org, users, person):
    assert _tables_holding(FACT) and _tables_holding(QUERY) and _tables_holding(MESSAGE_USER)
    erasure.erase_actor(org.u1, principal=users.p_owner)
    for text in PERSONAL:
        assert _tables_holding(text) == [], text
    # What its agent was told from wider scopes is the organisation's: it stays as a memory,
    # but no stored turn of u1 shows it any more.
    assert _tables_holding(ORG_POLICY) == ["memory_core_memory.text"]
    assert "u2 works in CET" in Memory.objects.get(scope=org.u2.scope).text
    assert Message.objects.filter(thread__actor=org.u2).count() == 1


def test_erasure_forgets_memories_scrubs_turns_deletes_transcripts_and_revokes_keys(
    org, users, person
):
    result = erasure.erase_actor(org.u1, principal=users.p_owner)
    assert result == erasure.Erased(
        memories=2, versions=3, digests=2, lines=5, threads=1, messages=2, api_keys=1, republished=0
    )
    assert not Memory.objects.filter(scope=org.u1.scope).exists()
    assert not Embedding.objects.filter(memory__scope=org.u1.scope).exists()
    assert not Thread.objects.filter(actor=org.u1).exists()
    for digest in Digest.objects.filter(actor=org.u1):
        assert (digest.query, digest.block, digest.entries) == (None, "", [])
        assert digest.stats["prompt_chars"] == 0
    assert set(DigestLine.objects.filter(digest__actor=org.u1).values_list("text", flat=True)) == {
        erasure.ERASED
    }
    key, secret = person
    key.refresh_from_db()
    assert key.revoked_at is not None and keys.authenticate(secret) is None
    assert not ApiKey.objects.filter(actor=org.u1, revoked_at__isnull=True).exists()
    # The tombstone: the ref the ledger names stays, the person's name goes.
    actor = Actor.objects.get(pk=org.u1.pk)
    assert (actor.ref, actor.display_name) == ("acme/u1", "")


def test_erasure_leaves_one_ledger_event_with_counts_and_an_access_log_row(org, users, person):
    result = erasure.erase_actor(org.u1, principal=users.p_owner)
    event = LedgerEvent.objects.get(kind="actor.erased")
    assert event.payload == result.as_dict()
    assert event.actor_ref == "acme/u1" and event.principal == "user:owner"
    assert LedgerEvent.objects.filter(kind="memory.forgotten", actor_ref="acme/u1").count() == 2
    assert LedgerEvent.objects.filter(kind="api_key.revoked").count() == 1
    row = AccessLog.objects.get(action="actor.erase")
    assert (row.outcome, row.actor_ref, row.count) == (200, "acme/u1", 3)
    assert row.detail == result.as_dict()
    for text in (FACT, KEY, QUERY, MESSAGE_USER):
        for payload in LedgerEvent.objects.values_list("payload", flat=True):
            assert text not in json.dumps(payload)


def test_a_copy_a_person_republished_wider_stays_unlinked(org, users):
    agent = writes.remember(org.u1, "units", "u1 measures in miles", principal=org.acme_agent)
    copy = writes.promote(agent.memory, org.acme, principal=users.p_owner)
    result = erasure.erase_actor(org.u1, principal=users.p_owner)
    assert result.republished == 1
    copy.refresh_from_db()
    assert copy.promoted_from is None and copy.text == "u1 measures in miles"
    assert copy.author == "human" and copy.origin_actor is None


@pytest.mark.parametrize("who", ["p_auditor", "p_outsider"])
def test_erasure_by_an_auditor_or_another_tenants_admin_is_refused_and_changes_nothing(
    org, users, person, who
):
    with pytest.raises(Forbidden):
        erasure.erase_actor(org.u1, principal=getattr(users, who))
    assert Memory.objects.filter(scope=org.u1.scope).count() == 3
    assert Message.objects.filter(thread__actor=org.u1).count() == 2
    assert Digest.objects.get(actor=org.u1, run_id="r-2").query == QUERY
    assert ApiKey.objects.filter(actor=org.u1, revoked_at__isnull=True).count() == 1
    assert not LedgerEvent.objects.filter(kind="actor.erased").exists()
    row = AccessLog.objects.get(action="actor.erase")
    assert (row.outcome, row.actor_ref, row.principal) == (403, "acme/u1", getattr(users, who).name)


def test_an_agent_may_not_erase_its_own_actor(org, person):
    with pytest.raises(Forbidden):
        erasure.erase_actor(org.u1, principal=org.acme_agent)
    assert Memory.objects.filter(scope=org.u1.scope).exists()


def test_erasing_twice_finds_nothing_more(org, users, person):
    erasure.erase_actor(org.u1, principal=users.p_owner)
    again = erasure.erase_actor(org.u1, principal=users.p_owner)
    assert again == erasure.Erased(
        memories=0, versions=0, digests=2, lines=0, threads=0, messages=0, api_keys=0, republished=0
    )


# --- manage.py erase_actor --------------------------------------------------------------


def _run(*args) -> str:
    out = io.StringIO()
    call_command("erase_actor", *args, stdout=out)
    return out.getvalue()


def test_erase_actor_command_with_yes_erases_and_prints_the_report(org, person):
    out = _run("acme/u1", "--yes")
    assert out.startswith("Erased acme/u1: 2 memories forgotten (3 versions); the text of ")
    assert "1 bound API key revoked" in out
    assert _tables_holding(FACT) == [] and _tables_holding(MESSAGE_USER) == []
    assert LedgerEvent.objects.get(kind="actor.erased").principal == "cli"


def test_erase_actor_command_asks_for_the_ref_and_a_wrong_one_erases_nothing(
    org, person, monkeypatch
):
    monkeypatch.setattr("builtins.input", lambda prompt: "acme/u2")
    with pytest.raises(CommandError, match="nothing was erased"):
        _run("acme/u1")
    assert Memory.objects.filter(scope=org.u1.scope).count() == 3
    monkeypatch.setattr("builtins.input", lambda prompt: "acme/u1\n")
    assert "Erased acme/u1" in _run("acme/u1")
    assert not Memory.objects.filter(scope=org.u1.scope).exists()


def test_erase_actor_command_refuses_an_unknown_ref(org):
    with pytest.raises(CommandError, match="no actor 'u1'"):
        _run("u1", "--yes")
    assert not LedgerEvent.objects.filter(kind="actor.erased").exists()
