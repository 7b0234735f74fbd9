"""Undo without rewriting history: reinstate, revert and tags, as services."""

import pytest

from memory_core import curation, undo, writes
from memory_core.errors import Forbidden, Invalid, NotFound
from memory_core.models import AccessLog, Author, LedgerEvent, Memory


@pytest.fixture
def policy(users, org):
    return writes.publish(org.acme, "fiscal-year", "starts in October", principal=users.p_owner)


def _state():
    return (Memory.objects.count(), LedgerEvent.objects.count(), list(Memory.objects.values()))


def test_reinstate_brings_an_invalidated_text_back_as_a_new_human_version(users, policy):
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
