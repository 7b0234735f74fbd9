"""The one shape of a state change (memory_core.changes.audited), and every service held to it.

A change's ledger event and access-log row are its transaction's last statements, so they
commit with it; a refusal is logged after the rollback, so its row survives. Inside the
test's transaction a service's own transaction is a savepoint: "its COMMIT" below is the
RELEASE of that savepoint. (tests/reliability/test_worker_kill.py kills real workers at
those points.)
"""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory_core import actors, curation, forgetting, transcripts, writes
from memory_core.accounts import grants, keys
from memory_core.actors import chain_of
from memory_core.changes import audited
from memory_core.errors import Forbidden
from memory_core.models import AccessLog, ApiKey, LedgerEvent, Message, ScopeGrant

ACCESS_INSERT = "INTO memory_core_accesslog"
LEDGER_APPEND = "memory_core_ledger_append("
# A remember's whole change is one call (writes.sql): its own last statements are the ledger
# event and the access-log row.
REMEMBER_CALL = "memory_core_remember("


def statements(capture) -> list[str]:
    return [q["sql"] for q in capture.captured_queries]


def _remembered(org):
    return writes.remember(org.u1, "tz", "Lisbon", principal=org.acme_agent).memory


def _published(org, operator):
    return writes.publish(org.acme, "units", "km", principal=operator)


# Every service that changes state, by the action its access-log row names.
CHANGES = {
    "remember": lambda org, users, op: _remembered(org),
    "publish": lambda org, users, op: _published(org, op),
    "correct": lambda org, users, op: writes.correct(_published(org, op), "miles", principal=op),
    "promote": lambda org, users, op: writes.promote(_remembered(org), org.acme, principal=op),
    "pin": lambda org, users, op: curation.set_pinned(_published(org, op), True, principal=op),
    "invalidate": lambda org, users, op: curation.invalidate(
        _published(org, op), "wrong", principal=op
    ),
    "forget": lambda org, users, op: forgetting.forget(_published(org, op), principal=op),
    "forget (API)": lambda org, users, op: forgetting.forget_for_actor(
        _remembered(org), org.u1, chain_of(org.u1), principal=org.acme_agent
    ),
    "grant": lambda org, users, op: grants.grant("owner", org.ops, "auditor", principal=op),
    "grant.revoke": lambda org, users, op: grants.revoke_grant(
        ScopeGrant.objects.get(user=users.owner), principal=op
    ),
    "api_key.create": lambda org, users, op: keys.create_api_key("k", org.acme, principal=op),
    "api_key.revoke": lambda org, users, op: keys.revoke_api_key(org.acme_key, principal=op),
    "actor.put": lambda org, users, op: actors.put_actor(
        "u7", None, [], org.acme_key, org.acme_agent
    ),
    "actor.register": lambda org, users, op: actors.actor_for_key(
        "u8", org.acme_key, org.acme_agent, register=True
    ),
    "message": lambda org, users, op: transcripts.record_message(
        org.u1, "t1", "user", "hello", principal=org.acme_agent
    ),
    "prune_history": lambda org, users, op: transcripts.prune_history(0, principal=op),
}


@pytest.mark.parametrize("action", list(CHANGES))
def test_every_change_logs_its_event_and_its_access_row_before_its_commit(
    org, users, operator, action
):
    if action == "prune_history":
        transcripts.record_message(org.u1, "t1", "user", "hello", principal=org.acme_agent)
    call = CHANGES[action]
    with CaptureQueriesContext(connection) as capture:
        call(org, users, operator)
    sql = statements(capture)
    last_access = max(i for i, s in enumerate(sql) if ACCESS_INSERT in s or REMEMBER_CALL in s)
    # The access-log row, then the change's COMMIT, and nothing else.
    assert [s.split('"')[0].strip() for s in sql[last_access + 1 :]] == ["RELEASE SAVEPOINT"]
    row = AccessLog.objects.order_by("-id").first()
    assert row.action == action.split(" ")[0]
    if action == "message":  # a message is a transcript line: no ledger event
        return
    event = LedgerEvent.objects.order_by("-id").first()
    assert event.created_at <= row.created_at
    if REMEMBER_CALL in sql[last_access]:
        assert event.payload["memory"] == row.memory_ids[0]
    else:
        events = [i for i, s in enumerate(sql) if LEDGER_APPEND in s]
        assert events and events[-1] < last_access


def test_a_refusal_is_logged_after_the_rollback_of_what_the_change_began(org, users):
    from memory_core.accounts.principals import Principal

    memory = writes.remember(org.u1, "tz", "Lisbon", principal=org.acme_agent).memory
    auditor = Principal.for_user(users.auditor)
    with CaptureQueriesContext(connection) as capture, pytest.raises(Forbidden):
        writes.promote(memory, org.acme, principal=auditor)
    sql = statements(capture)
    rollback = max(i for i, s in enumerate(sql) if s.startswith("ROLLBACK TO SAVEPOINT"))
    refusal = max(i for i, s in enumerate(sql) if ACCESS_INSERT in s)
    assert refusal > rollback
    row = AccessLog.objects.get(action="promote")
    assert (row.outcome, row.scope, row.detail) == (403, "tenant:acme", {"reason": "forbidden"})


def test_a_change_that_does_not_say_what_it_logs_is_rolled_back(org, operator):
    rows, events = AccessLog.objects.count(), LedgerEvent.objects.count()
    with pytest.raises(RuntimeError, match="did not say what it logs"):
        with audited(operator, "api_key.create", scope=org.acme.token) as change:
            ApiKey.objects.create(
                name="unlogged",
                prefix="zzzzzzzzzz",
                secret_hash="0" * 64,
                reach=org.acme,
                created_by="cli:test",
            )
            change.event("api_key.created", org.acme, {"api_key": "key_unlogged"})
    assert not ApiKey.objects.filter(name="unlogged").exists()
    assert (AccessLog.objects.count(), LedgerEvent.objects.count()) == (rows, events)


def test_a_failing_event_takes_the_change_and_its_row_with_it(org, operator):
    rows = AccessLog.objects.count()
    with pytest.raises(ValueError, match="not allowed"):
        with audited(operator, "message", actor_ref=org.u1.ref) as change:
            Message.objects.create(
                thread=org.u1.threads.create(ref="t9"), role="user", text="kept?"
            )
            change.event("message.posted", org.u1.scope, {"text": "a fact"})
            change.log(201)
    assert not Message.objects.filter(text="kept?").exists()
    assert AccessLog.objects.count() == rows


def test_a_change_found_already_made_records_nothing(org, operator):
    rows, events = AccessLog.objects.count(), LedgerEvent.objects.count()
    with audited(operator, "actor.register", actor_ref=org.u1.ref) as change:
        change.event("actor.registered", org.u1.scope, {"scopes": []})
        change.unchanged()
    assert (AccessLog.objects.count(), LedgerEvent.objects.count()) == (rows, events)


def test_first_sight_registration_is_one_logged_change(org):
    actor = actors.actor_for_key("u8", org.acme_key, org.acme_agent, register=True)
    row = AccessLog.objects.get(action="actor.register")
    assert (row.outcome, row.actor_ref, row.scope, row.principal) == (
        201,
        "acme/u8",
        "actor:acme/u8",
        org.acme_key.principal,
    )
    event = LedgerEvent.objects.get(kind="actor.registered", actor_ref="acme/u8")
    assert event.payload == {"scopes": list(chain_of(actor))}
    # Seen again: nothing more to register or log.
    actors.actor_for_key("u8", org.acme_key, org.acme_agent, register=True)
    assert AccessLog.objects.filter(action="actor.register").count() == 1
