"""remember, publish, correct, promote: supersession, authority, ledger and access log."""

import pytest

from memory_core import writes
from memory_core.errors import Forbidden, Invalid, NotFound
from memory_core.models import AccessLog, LedgerEvent, Memory


def _remember(org, key="fiscal-year", fact="they report on the calendar year", **kw):
    return writes.remember(org.u1, key, fact, principal=org.acme_agent, **kw)


def test_remember_writes_an_agent_memory_at_the_actors_own_scope(org):
    written = _remember(org, run_id="run_1", tool_call_id="call_1", thread_id="thr_1")
    m = written.memory
    assert written.created
    assert (m.scope.token, m.author, m.origin_actor, m.origin_thread) == (
        "actor:acme/u1",
        "agent",
        org.u1,
        "thr_1",
    )
    event = LedgerEvent.objects.filter(kind="memory.remembered").get()
    assert event.payload == {"memory": m.uid, "supersedes": None, "chars": len(m.text)}
    assert event.stream == "tenant:acme" and event.actor_ref == "acme/u1"
    row = AccessLog.objects.filter(action="remember").get()
    assert (row.outcome, row.memory_ids, row.principal) == (201, [m.uid], org.acme_agent.name)


def test_remember_supersedes_the_live_row_and_keeps_its_lineage(org):
    first = _remember(org, fact="they report on the calendar year").memory
    second = _remember(org, fact="they report on the April year").memory
    first.refresh_from_db()
    assert first.retired_reason == "superseded" and first.retired_at is not None
    assert second.supersedes == first and second.lineage == first.lineage
    assert Memory.objects.live().filter(scope=org.u1.scope, key="fiscal-year").get() == second


def test_remember_is_idempotent_per_run_and_tool_call(org):
    one = _remember(org, run_id="run_1", tool_call_id="call_1")
    two = _remember(org, fact="something else", run_id="run_1", tool_call_id="call_1")
    assert one.created and not two.created
    assert two.memory.pk == one.memory.pk
    assert Memory.objects.filter(key="fiscal-year").count() == 1
    assert LedgerEvent.objects.filter(kind="memory.remembered").count() == 1
    assert list(AccessLog.objects.filter(action="remember").values_list("outcome", flat=True)) == [
        200,
        201,
    ]


@pytest.mark.parametrize(
    "key, fact, message",
    [
        ("fiscal-year", "x" * 241, "the limit is 240 characters"),
        ("fiscal-year", "", "empty"),
        ("fiscal-year", "two\nlines", "line"),
        ("Fiscal Year", "fine", "key"),
    ],
)
def test_remember_refuses_bad_input_and_changes_nothing(org, key, fact, message):
    with pytest.raises(Invalid, match=message):
        _remember(org, key=key, fact=fact)
    assert not Memory.objects.exists()
    assert not LedgerEvent.objects.filter(kind="memory.remembered").exists()
    assert AccessLog.objects.filter(action="remember", outcome=422).count() == 1


def test_publish_needs_a_grant_reaching_the_scope(org, users):
    with pytest.raises(Forbidden):
        writes.publish(org.acme, "units", "miles", principal=users.p_outsider)
    with pytest.raises(Forbidden):
        writes.publish(org.acme, "units", "miles", principal=users.p_auditor)
    assert not Memory.objects.exists()
    assert AccessLog.objects.filter(action="publish", outcome=403).count() == 2
    m = writes.publish(org.ops, "units", "miles", principal=users.p_owner)
    assert (m.author, m.origin_user, m.scope) == ("human", "owner", org.ops)


def test_agents_cannot_publish(org):
    with pytest.raises(Forbidden):
        writes.publish(org.acme, "units", "miles", principal=org.acme_agent)


def test_correct_writes_a_human_version_superseding_the_agents(org, users):
    agent = _remember(org).memory
    fixed = writes.correct(agent, "they report on the fiscal year", principal=users.p_owner)
    agent.refresh_from_db()
    assert fixed.author == "human" and fixed.supersedes == agent
    assert agent.retired_reason == "superseded"
    with pytest.raises(NotFound):
        writes.correct(agent, "again", principal=users.p_owner)  # no longer live


def test_correction_that_changes_nothing_is_refused_and_logged(org, users):
    agent = _remember(org).memory
    events, versions = LedgerEvent.objects.count(), Memory.objects.count()
    with pytest.raises(Invalid, match="same as the current text"):
        writes.correct(agent, agent.text, principal=users.p_owner)
    agent.refresh_from_db()
    assert agent.retired_at is None
    assert Memory.objects.count() == versions and LedgerEvent.objects.count() == events
    refused = AccessLog.objects.get(action="correct", outcome=422)
    assert refused.principal == "user:owner" and refused.detail == {"reason": "invalid"}


def test_promote_republishes_wider_with_a_link_and_optional_retirement(org, users):
    agent = _remember(org).memory
    assert [s.token for s in writes.promotion_targets(agent)] == [
        "team:acme/ops",
        "tenant:acme",
        "global",
    ]
    promoted = writes.promote(agent, org.acme, principal=users.p_owner, retire_original=True)
    agent.refresh_from_db()
    assert promoted.scope == org.acme and promoted.author == "human"
    assert promoted.promoted_from == agent and promoted.text == agent.text
    assert agent.retired_reason == "promoted"
    event = LedgerEvent.objects.get(kind="memory.promoted")
    assert event.payload["promoted_from"] == agent.uid
    assert "text" not in event.payload and "key" not in event.payload


def test_promote_beyond_the_users_grant_is_refused(org, users):
    agent = _remember(org).memory
    with pytest.raises(Forbidden):
        writes.promote(agent, org.root, principal=users.p_owner)
    with pytest.raises(Invalid):
        writes.promote(agent, org.globex, principal=users.p_su)  # not in the actor's chain
    assert not Memory.objects.filter(scope__in=[org.root, org.globex]).exists()


def test_remember_reads_the_wider_values_of_its_key_in_its_own_statement(org, operator):
    from memory_core import visibility
    from memory_core.actors import chain_of
    from memory_core.db import prepared
    from memory_core.rules.facts import Record

    writes.publish(org.root, "fiscal-year", "starts in October", principal=operator)
    writes.publish(org.acme, "fiscal-year", "starts in April", principal=operator)
    writes.publish(org.globex, "fiscal-year", "globex: July", principal=operator)
    writes.publish(org.acme, "units", "metric", principal=operator)
    chain = chain_of(org.u1)
    written = writes.remember(
        org.u1, "fiscal-year", "calendar year", principal=org.acme_agent, chain=chain
    )
    apart = prepared.fetch_all(
        visibility.KEY_IN_SCOPES, {"chain": list(chain[1:]), "key": "fiscal-year"}
    )
    assert sorted(written.wider) == sorted(Record(*row) for row in apart)
    assert {r.scope for r in written.wider} == {"tenant:acme", "global"}
    shown = visibility.memory_shape_for_actor(written.memory, chain, written.wider)
    assert shown == visibility.memory_shape_for_actor(written.memory, chain)
    # Not asked for: not read.
    assert writes.remember(org.u1, "units", "imperial", principal=org.acme_agent).wider is None


def test_a_repeated_tool_call_under_another_key_leaves_its_wider_values_to_be_read_apart(org):
    from memory_core.actors import chain_of

    chain = chain_of(org.u1)
    first = writes.remember(
        org.u1, "tz", "Lisbon", principal=org.acme_agent, run_id="r", tool_call_id="c"
    )
    again = writes.remember(
        org.u1,
        "city",
        "Lisbon",
        principal=org.acme_agent,
        run_id="r",
        tool_call_id="c",
        chain=chain,
    )
    assert (again.created, again.memory.uid, again.wider) == (False, first.memory.uid, None)


def test_outside_a_transaction_a_remember_is_one_statement_and_its_own_transaction(
    transactional_db, org
):
    """No BEGIN, no COMMIT: the call is the transaction, and it leaves the version, its
    vector, its ledger event and its access-log row (writes.sql)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from memory_core.models import Embedding

    writes.remember(org.u1, "tz", "Lisbon", principal=org.acme_agent)
    with CaptureQueriesContext(connection) as capture:
        written = writes.remember(org.u1, "tz", "Porto", principal=org.acme_agent)
    sql = [q["sql"] for q in capture.captured_queries]
    assert len(sql) == 1 and "memory_core_remember(" in sql[0]
    assert not connection.in_atomic_block
    memory = written.memory
    old = Memory.objects.get(uid=written.memory.supersedes.uid)
    assert (old.retired_reason, old.retired_by) == ("superseded", org.acme_agent.name)
    assert Memory.objects.get(pk=memory.pk).text == "Porto"
    assert Embedding.objects.filter(memory_id=memory.pk).exists()
    event = LedgerEvent.objects.get(kind="memory.remembered", payload__memory=memory.uid)
    assert event.payload == {"memory": memory.uid, "supersedes": old.uid, "chars": 5}
    row = AccessLog.objects.get(action="remember", memory_ids=[memory.uid])
    assert (row.outcome, row.scope, row.detail) == (
        201,
        "actor:acme/u1",
        {"chars": 5, "created": True},
    )
