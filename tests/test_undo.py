"""Undo without rewriting history: reinstate, unrepublish, revert and tags, as services; and
the steps that undo a bulk, as a rule."""

from types import SimpleNamespace

import pytest

from memory_core import bulk, curation, undo, writes
from memory_core.errors import Forbidden, Invalid, NotFound
from memory_core.models import AccessLog, Author, LedgerEvent, Memory


@pytest.fixture
def policy(users, org):
    return writes.publish(org.acme, "fiscal-year", "starts in October", principal=users.p_owner)


def _state():
    return (Memory.objects.count(), LedgerEvent.objects.count(), list(Memory.objects.values()))


def test_reinstate_brings_an_invalidated_text_back_as_a_new_version_by_its_author(users, policy):
    curation.invalidate(policy, "wrong", principal=users.p_owner)
    new = undo.reinstate(Memory.objects.get(pk=policy.pk), principal=users.p_owner)
    assert new.text == "starts in October" and new.retired_at is None
    assert new.author == Author.HUMAN and new.origin_user == "owner"
    assert new.lineage == policy.lineage and new.supersedes_id == policy.pk
    old = Memory.objects.get(pk=policy.pk)
    assert old.retired_reason == "invalidated" and old.retired_note == "wrong"
    event = LedgerEvent.objects.filter(kind="memory.reinstated").get()
    assert event.payload == {"memory": new.uid, "restores": policy.uid, "chars": 17}
    assert AccessLog.objects.filter(action="reinstate", outcome=201).count() == 1


def test_reinstate_is_refused_while_another_value_holds_the_slot(users, org, policy):
    curation.invalidate(policy, "wrong", principal=users.p_owner)
    writes.publish(org.acme, "fiscal-year", "starts in April", principal=users.p_owner)
    before = _state()
    with pytest.raises(Invalid, match="another live value"):
        undo.reinstate(Memory.objects.get(pk=policy.pk), principal=users.p_owner)
    assert _state() == before
    assert AccessLog.objects.filter(action="reinstate", outcome=422).count() == 1


def test_reinstate_of_a_live_or_superseded_memory_is_refused(users, policy):
    with pytest.raises(Invalid):
        undo.reinstate(policy, principal=users.p_owner)
    writes.correct(policy, "starts in April", principal=users.p_owner)
    before = _state()
    with pytest.raises(Invalid, match="only an invalidated"):
        undo.reinstate(Memory.objects.get(pk=policy.pk), principal=users.p_owner)
    assert _state() == before


def test_reinstate_twice_is_refused(users, policy):
    curation.invalidate(policy, "wrong", principal=users.p_owner)
    new = undo.reinstate(Memory.objects.get(pk=policy.pk), principal=users.p_owner)
    curation.invalidate(new, "still wrong", principal=users.p_owner)
    with pytest.raises(Invalid, match="already"):
        undo.reinstate(Memory.objects.get(pk=policy.pk), principal=users.p_owner)


def test_reinstate_by_an_auditor_is_forbidden_and_logged(users, policy):
    curation.invalidate(policy, "wrong", principal=users.p_owner)
    before = _state()
    with pytest.raises(Forbidden):
        undo.reinstate(Memory.objects.get(pk=policy.pk), principal=users.p_auditor)
    assert _state() == before
    assert AccessLog.objects.filter(action="reinstate", outcome=403).count() == 1


def test_revert_writes_the_earlier_text_as_a_new_version(users, policy):
    corrected = writes.correct(policy, "starts in April", principal=users.p_owner)
    new = undo.revert(corrected, Memory.objects.get(pk=policy.pk), principal=users.p_owner)
    assert new.text == "starts in October" and new.author == Author.HUMAN
    assert new.lineage == policy.lineage and new.supersedes_id == corrected.pk
    assert Memory.objects.get(pk=corrected.pk).retired_reason == "superseded"
    event = LedgerEvent.objects.filter(kind="memory.reverted").get()
    assert event.payload == {
        "memory": new.uid,
        "supersedes": corrected.uid,
        "restores": policy.uid,
        "chars": 17,
    }


def test_revert_to_the_current_text_changes_nothing(users, policy):
    corrected = writes.correct(policy, "starts in April", principal=users.p_owner)
    back = undo.revert(corrected, Memory.objects.get(pk=policy.pk), principal=users.p_owner)
    before = _state()
    with pytest.raises(Invalid, match="current text"):
        undo.revert(back, Memory.objects.get(pk=policy.pk), principal=users.p_owner)
    assert _state() == before


def test_revert_of_a_retired_version_or_to_another_lineage_is_refused(users, org, policy):
    corrected = writes.correct(policy, "starts in April", principal=users.p_owner)
    other = writes.publish(org.acme, "other", "something", principal=users.p_owner)
    before = _state()
    with pytest.raises(NotFound):
        undo.revert(Memory.objects.get(pk=policy.pk), corrected, principal=users.p_owner)
    with pytest.raises(Invalid):
        undo.revert(corrected, other, principal=users.p_owner)
    assert _state() == before


def test_revert_by_an_auditor_is_forbidden(users, policy):
    corrected = writes.correct(policy, "starts in April", principal=users.p_owner)
    before = _state()
    with pytest.raises(Forbidden):
        undo.revert(corrected, Memory.objects.get(pk=policy.pk), principal=users.p_auditor)
    assert _state() == before
    assert AccessLog.objects.filter(action="revert", outcome=403).count() == 1


def test_set_tags_changes_the_live_row_and_ledgers_a_count(users, policy):
    tagged = curation.set_tags(policy, ["finance", "calendar"], principal=users.p_owner)
    assert Memory.objects.get(pk=policy.pk).tags == ["finance", "calendar"] == tagged.tags
    event = LedgerEvent.objects.filter(kind="memory.tagged").get()
    assert event.payload == {"memory": policy.uid, "count": 2}


def test_set_tags_refuses_bad_tags_unchanged_tags_and_auditors(users, policy):
    curation.set_tags(policy, ["finance"], principal=users.p_owner)
    before = _state()
    with pytest.raises(Invalid):
        curation.set_tags(policy, ["Not A Slug"], principal=users.p_owner)
    with pytest.raises(Invalid, match="nothing was changed"):
        curation.set_tags(policy, ["finance"], principal=users.p_owner)
    with pytest.raises(Forbidden):
        curation.set_tags(policy, ["x"], principal=users.p_auditor)
    assert _state() == before
    assert AccessLog.objects.filter(action="tag", outcome=403).count() == 1


# --- reinstate keeps the author; unrepublish --------------------------------------------


@pytest.fixture
def conclusion(org):
    return writes.remember(
        org.u1, "tz", "works in CET", principal=org.acme_agent, run_id="r-1", tool_call_id="c-1"
    ).memory


def test_reinstate_of_an_agents_conclusion_keeps_it_the_agents(org, users, conclusion):
    curation.invalidate(conclusion, "unsure", principal=users.p_owner)
    new = undo.reinstate(Memory.objects.get(pk=conclusion.pk), principal=users.p_owner)
    assert new.author == Author.AGENT and new.origin_user is None
    assert new.origin_actor_id == org.u1.pk and new.origin_run == "r-1"
    # The tool call stays the original's: a retried remember still finds that one.
    assert new.origin_tool_call is None
    repeat = writes.remember(
        org.u1, "tz", "works in CET", principal=org.acme_agent, run_id="r-1", tool_call_id="c-1"
    )
    assert not repeat.created and repeat.memory.pk == conclusion.pk
    event = LedgerEvent.objects.get(kind="memory.reinstated")
    assert event.principal == "user:owner" and event.payload["restores"] == conclusion.uid


def test_unrepublish_brings_back_the_replaced_value_and_the_original(org, users, conclusion):
    replaced = writes.publish(org.acme, "tz", "UTC", principal=users.p_owner, pinned=True)
    new = writes.promote(
        conclusion, org.acme, principal=users.p_owner, retire_original=True, pinned=False
    )
    written = undo.unrepublish(
        new, principal=users.p_owner, retired_original=True, note="taken back"
    )
    at_acme, original = written
    assert at_acme.text == "UTC" and at_acme.pinned and at_acme.origin_user == "owner"
    assert at_acme.supersedes_id == new.pk and at_acme.lineage == replaced.lineage
    assert original.author == Author.AGENT and original.supersedes_id == conclusion.pk
    kinds = list(LedgerEvent.objects.order_by("-id").values_list("kind", flat=True)[:2])
    assert sorted(kinds) == ["memory.reinstated", "memory.reverted"]
    assert AccessLog.objects.filter(action="unrepublish", outcome=200).count() == 1


def test_unrepublish_of_a_version_no_longer_live_changes_nothing(org, users, conclusion):
    new = writes.promote(conclusion, org.acme, principal=users.p_owner, retire_original=True)
    writes.correct(new, "Acme works in CET", principal=users.p_owner)
    before = _state()
    with pytest.raises(NotFound) as refused:
        undo.unrepublish(
            Memory.objects.get(pk=new.pk),
            principal=users.p_owner,
            retired_original=True,
            note="taken back",
        )
    assert refused.value.reason == undo.CHANGED
    assert _state() == before


def test_unrepublish_is_all_or_nothing_when_the_originals_slot_is_taken(org, users, conclusion):
    new = writes.promote(conclusion, org.acme, principal=users.p_owner, retire_original=True)
    writes.remember(org.u1, "tz", "works in PST", principal=org.acme_agent)
    before = _state()
    with pytest.raises(Invalid) as refused:
        undo.unrepublish(new, principal=users.p_owner, retired_original=True, note="back")
    assert refused.value.reason == undo.SLOT_TAKEN
    assert _state() == before


def test_unrepublish_by_an_auditor_is_forbidden(org, users, conclusion):
    new = writes.promote(conclusion, org.acme, principal=users.p_owner)
    before = _state()
    with pytest.raises(Forbidden):
        undo.unrepublish(new, principal=users.p_auditor, retired_original=False, note="x")
    assert _state() == before


# --- the steps that undo a bulk (a rule over its ledger events: no database) ---------------


def _event(kind, scope="tenant:acme", **payload):
    return SimpleNamespace(kind=kind, scope=scope, payload={**payload, "bulk": "bulk_X"})


def test_each_bulk_change_has_its_reversal():
    events = [
        _event("memory.pinned", memory="mem_A", pinned=True),
        _event("memory.unpinned", memory="mem_B", pinned=False),
        _event("memory.invalidated", memory="mem_C", reason_chars=5),
        _event("memory.reinstated", memory="mem_E", restores="mem_D", chars=3),
        _event(
            "memory.promoted",
            scope="global",
            memory="mem_G",
            promoted_from="mem_F",
            from_scope="actor:acme/u1",
            retired_original=True,
        ),
    ]
    assert bulk.undo_steps(events) == [
        bulk.Step("mem_A", "tenant:acme", "unpin", "mem_A"),
        bulk.Step("mem_B", "tenant:acme", "pin", "mem_B"),
        bulk.Step("mem_C", "tenant:acme", "reinstate", "mem_C"),
        bulk.Step("mem_D", "tenant:acme", "invalidate", "mem_E"),
        bulk.Step("mem_F", "actor:acme/u1", "unrepublish", "mem_G", retired_original=True),
    ]


def test_a_reports_words_come_from_codes_never_from_a_memory():
    report = bulk.BulkReport("bulk_X", "republish", target="tenant:acme", retire_original=True)
    done = bulk.Outcome("mem_A", "actor:acme/u1", made="mem_B")
    assert bulk.describe(report, done) == (
        "republished at tenant:acme as mem_B; the original retired"
    )
    refused = bulk.Outcome("mem_A", "actor:acme/u1", 422, "invalid")
    assert bulk.describe(report, refused) == "tenant:acme is not wider than its scope"
    skipped = bulk.Outcome("mem_A", "actor:acme/u1", bulk.SKIPPED, undo.CHANGED)
    assert bulk.describe(report, skipped) == "changed since the bulk: left as it is"
    row = done.as_row()
    assert bulk.Outcome.from_row(row) == done and set(row) == {"uid", "scope", "status", "made"}
