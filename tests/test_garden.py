"""Gardening passes (memory_core/garden/): each kind with its negatives, idempotence,
obsolescence, approve and dismiss with their ledger events, forget, and the command."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import IntegrityError, transaction
from django.utils import timezone

from memory_core import actors, curation, forgetting, turns, writes
from memory_core.errors import Forbidden, Invalid
from memory_core.garden import decisions, passes
from memory_core.models import (
    AccessLog,
    LedgerEvent,
    Memory,
    Proposal,
    ProposalEvidence,
    ProposalState,
    ScopeHealth,
)
from tests.helpers import use_server


@pytest.fixture(autouse=True)
def thresholds(settings):
    settings.GARDEN_MIN_ACTORS = 3
    settings.GARDEN_STALE_DAYS = 30
    # Lexical equivalence only, unless a test asks for the semantic half.
    settings.MEMORY_EMBEDDER = "none"


@pytest.fixture
def team(org):
    """Four acme actors in team:acme/ops (u1, u3, u4, u5) and u2 outside it."""
    more = {}
    for ref in ("u3", "u4", "u5"):
        more[ref] = actors.put_actor(
            ref, ref.upper(), ["team:acme/ops", "tenant:acme"], org.acme_key, org.acme_agent
        )
    return more


def note(actor, key, text, agent):
    return writes.remember(actor, key, text, principal=agent).memory


def open_of(kind):
    return list(Proposal.objects.filter(kind=kind, state=ProposalState.OPEN))


def evidence_ids(proposal):
    return set(proposal.evidence.values_list("memory_id", flat=True))


def run(**kw):
    return passes.run_pass(**kw)


# --- promote --------------------------------------------------------------------------


def test_same_key_equivalent_text_at_three_actors_proposes_publishing_at_the_team(org, team):
    a = note(org.u1, "tz", "Works in the Berlin time zone.", org.acme_agent)
    b = note(team["u3"], "tz", "works in the berlin time zone", org.acme_agent)
    c = note(team["u4"], "tz", "Berlin time zone: works in it", org.acme_agent)
    report = run()
    promote = open_of("promote")
    at_team = [p for p in promote if p.scope_id == org.ops.id]
    assert len(at_team) == 1
    assert evidence_ids(at_team[0]) == {a.id, b.id, c.id}
    assert at_team[0].tenant == "acme"
    assert report.created["promote"] >= 1


def test_two_actors_are_below_the_threshold(org, team):
    note(org.u1, "tz", "Works in the Berlin time zone.", org.acme_agent)
    note(team["u3"], "tz", "works in the berlin time zone", org.acme_agent)
    note(team["u4"], "tz", "Prefers mornings for calls", org.acme_agent)
    run()
    assert open_of("promote") == []


def test_promotion_never_spans_tenants(org, operator):
    """Two acme actors and two globex actors with the same note: no group reaches three."""
    for ref in ("x1", "x2"):
        x = actors.put_actor(ref, ref, ["tenant:globex"], org.globex_key, org.globex_agent)
        note(x, "tz", "Works in the Berlin time zone.", org.globex_agent)
    note(org.x9, "lang", "Speaks German", org.globex_agent)
    note(org.u1, "tz", "Works in the Berlin time zone.", org.acme_agent)
    note(org.u2, "tz", "Works in the Berlin time zone.", org.acme_agent)
    run()
    assert open_of("promote") == []


def test_members_of_one_team_get_one_proposal_at_the_team_not_also_at_the_tenant(org, team):
    copies = [
        note(actor, "tz", "Works in the Berlin time zone.", org.acme_agent)
        for actor in (org.u1, *team.values())
    ]
    report = run()
    [proposal] = open_of("promote")
    assert proposal.scope_id == org.ops.id
    assert evidence_ids(proposal) == {c.id for c in copies}
    assert report.created["promote"] == 1


def test_people_of_two_teams_are_proposed_once_at_their_tenant(org, team, operator):
    actors.ensure_scope("team:acme/sales", org.acme, "Sales", principal=operator)
    sellers = [
        actors.put_actor(r, r, ["team:acme/sales", "tenant:acme"], org.acme_key, org.acme_agent)
        for r in ("s1", "s2")
    ]
    copies = [
        note(actor, "tz", "Works in the Berlin time zone.", org.acme_agent)
        for actor in (org.u1, team["u3"], team["u4"], *sellers)
    ]
    run()
    [proposal] = open_of("promote")
    assert proposal.scope_id == org.acme.id and proposal.tenant == "acme"
    assert evidence_ids(proposal) == {c.id for c in copies}


def test_a_team_and_a_person_outside_it_are_proposed_once_at_their_tenant(org, team):
    copies = [
        note(actor, "tz", "Works in the Berlin time zone.", org.acme_agent)
        for actor in (org.u1, team["u3"], team["u4"], org.u2)
    ]
    run()
    [proposal] = open_of("promote")
    assert proposal.scope_id == org.acme.id
    assert evidence_ids(proposal) == {c.id for c in copies}


def test_rerunning_the_pass_keeps_one_open_proposal_per_copy(org, team):
    copies = [
        note(actor, "tz", "Works in the Berlin time zone.", org.acme_agent)
        for actor in (org.u1, *team.values())
    ]
    first = run()
    again = run()
    assert again.created["promote"] == 0 and again.kept["promote"] == first.created["promote"]
    rows = ProposalEvidence.objects.filter(
        proposal__kind="promote", proposal__state=ProposalState.OPEN
    )
    held = sorted(rows.values_list("memory_id", flat=True))
    assert held == sorted(c.id for c in copies)  # each copy in exactly one open proposal
    assert Proposal.objects.filter(kind="promote").count() == 1


def test_a_pass_over_one_team_does_not_propose_there_what_spans_the_tenant(org, team):
    for actor in (org.u1, team["u3"], team["u4"], org.u2):
        note(actor, "tz", "Works in the Berlin time zone.", org.acme_agent)
    run(scope=org.ops)
    assert open_of("promote") == []
    run()
    [proposal] = open_of("promote")
    run(scope=org.ops)
    proposal.refresh_from_db()
    assert proposal.state == "open" and proposal.scope_id == org.acme.id
    assert len(open_of("promote")) == 1


def test_already_published_equivalent_value_is_not_proposed(org, team, operator):
    for actor in (org.u1, team["u3"], team["u4"]):
        note(actor, "tz", "Works in the Berlin time zone.", org.acme_agent)
    writes.publish(org.ops, "tz", "works in the Berlin time zone", principal=operator)
    run()
    assert [p for p in open_of("promote") if p.scope_id == org.ops.id] == []


# --- merge ----------------------------------------------------------------------------


def test_two_keys_saying_the_same_thing_in_one_scope_propose_a_merge(org):
    old = note(org.u1, "drink", "Prefers tea in the morning.", org.acme_agent)
    new = note(org.u1, "morning-drink", "in the morning, prefers tea", org.acme_agent)
    note(org.u1, "lunch", "Eats lunch at noon", org.acme_agent)
    run()
    [merge] = open_of("merge")
    roles = dict(merge.evidence.values_list("memory_id", "role"))
    assert roles == {new.id: "keep", old.id: "drop"}
    assert merge.scope_id == org.u1.scope_id


def test_the_same_text_at_two_actors_is_no_merge(org):
    note(org.u1, "drink", "Prefers tea in the morning.", org.acme_agent)
    note(org.u2, "morning-drink", "Prefers tea in the morning.", org.acme_agent)
    run()
    assert open_of("merge") == []


# --- stale ----------------------------------------------------------------------------


def test_memories_no_turn_showed_for_d_days_are_proposed_for_invalidation(org):
    shown = note(org.u1, "tz", "Berlin time", org.acme_agent)
    unshown = note(org.u1, "pet", "Has a cat", org.acme_agent)
    turns.resolve_turn(org.u1, "run-1", principal=org.acme_agent, max_memories=1)
    later = timezone.now() + timedelta(days=31)
    digest = org.u1.digests.get()
    shown_by_turn = set(digest.lines.values_list("memory_id", flat=True))
    # The turn happened 25 days after the memories were written (within the last D days).
    org.u1.digests.update(created_at=timezone.now() + timedelta(days=25))
    run(now=later)
    [stale] = open_of("stale")
    expected = {shown.id, unshown.id} - shown_by_turn
    assert evidence_ids(stale) == expected and len(expected) == 1


def test_recent_memories_are_not_stale_but_expiring_ones_are(org, operator):
    note(org.u1, "tz", "Berlin time", org.acme_agent)
    expiring = note(org.u1, "trip", "Travels next week", org.acme_agent)
    Memory.objects.filter(pk=expiring.pk).update(expires_at=timezone.now() + timedelta(days=5))
    run()
    [stale] = open_of("stale")
    assert evidence_ids(stale) == {expiring.id}


# --- shadowed -------------------------------------------------------------------------


def test_a_persons_value_beaten_for_three_actors_is_proposed_for_review(org, team, users):
    wide = writes.publish(org.acme, "units", "kilometres", principal=users.p_owner)
    beaten = [
        note(actor, "units", "miles, always", org.acme_agent)
        for actor in (org.u1, team["u3"], team["u4"])
    ]
    run()
    [review] = open_of("shadowed")
    assert review.scope_id == org.acme.id
    roles = dict(review.evidence.values_list("memory_id", "role"))
    assert roles == {wide.id: "wide", **{m.id: "conclusion" for m in beaten}}


def test_a_value_at_global_is_reviewed_per_tenant(org, team, operator):
    writes.publish(org.root, "units", "kilometres", principal=operator)
    for actor in (org.u1, team["u3"]):
        note(actor, "units", "miles", org.acme_agent)
    for ref in ("x1", "x2"):
        x = actors.put_actor(ref, ref, ["tenant:globex"], org.globex_key, org.globex_agent)
        note(x, "units", "miles", org.globex_agent)
    run()
    assert open_of("shadowed") == []  # two and two: neither tenant reaches three
    note(team["u4"], "units", "leagues", org.acme_agent)
    run()
    [review] = open_of("shadowed")
    assert review.tenant == "acme" and review.evidence.count() == 4


def test_agreeing_conclusions_do_not_shadow(org, team, users):
    writes.publish(org.acme, "units", "kilometres", principal=users.p_owner)
    for actor in (org.u1, team["u3"], team["u4"]):
        note(actor, "units", "Kilometres", org.acme_agent)
    run()
    assert open_of("shadowed") == []


# --- idempotence, obsolescence, dismissal ----------------------------------------------


@pytest.fixture
def promotion(org, team):
    copies = [
        note(actor, "tz", "Works in the Berlin time zone.", org.acme_agent)
        for actor in (org.u1, team["u3"], team["u4"])
    ]
    run()
    [proposal] = [p for p in open_of("promote") if p.scope_id == org.ops.id]
    return proposal, copies


def test_a_second_pass_keeps_the_same_open_proposal(promotion):
    proposal, _ = promotion
    report = run()
    assert report.kept["promote"] >= 1 and report.created["promote"] == 0
    assert Proposal.objects.filter(fingerprint=proposal.fingerprint).count() == 1
    proposal.refresh_from_db()
    assert proposal.state == "open"


def test_the_database_refuses_a_second_open_proposal_for_the_same_evidence(promotion):
    proposal, _ = promotion
    with pytest.raises(IntegrityError), transaction.atomic():
        Proposal.objects.create(
            kind=proposal.kind,
            scope=proposal.scope,
            fingerprint=proposal.fingerprint,
            seen_at=timezone.now(),
        )


def test_changed_evidence_makes_the_proposal_obsolete_and_opens_another(org, team, promotion):
    proposal, copies = promotion
    note(team["u5"], "tz", "works in the Berlin time zone", org.acme_agent)
    run()
    proposal.refresh_from_db()
    assert proposal.state == "obsolete" and proposal.closed_at is not None
    [fresh] = [p for p in open_of("promote") if p.scope_id == org.ops.id]
    assert len(evidence_ids(fresh)) == 4


def test_a_superseded_copy_makes_the_proposal_obsolete(org, promotion):
    proposal, copies = promotion
    note(org.u1, "tz", "Works from Lisbon now", org.acme_agent)
    run()
    proposal.refresh_from_db()
    assert proposal.state == "obsolete"


def test_dry_run_writes_nothing(org, team):
    for actor in (org.u1, team["u3"], team["u4"]):
        note(actor, "tz", "Works in the Berlin time zone.", org.acme_agent)
    report = run(dry_run=True)
    assert report.created["promote"] >= 1
    assert not Proposal.objects.exists() and not ScopeHealth.objects.exists()


def test_a_dismissed_proposal_returns_only_when_its_evidence_grows(org, team, users, promotion):
    proposal, _ = promotion
    decisions.dismiss(proposal, "we keep time zones per person", principal=users.p_owner)
    run()
    assert [p for p in open_of("promote") if p.scope_id == org.ops.id] == []
    note(team["u5"], "tz", "Works in the Berlin time zone.", org.acme_agent)
    run()
    [back] = [p for p in open_of("promote") if p.scope_id == org.ops.id]
    assert len(evidence_ids(back)) == 4


def test_scope_option_limits_the_pass(org, team, promotion):
    note(org.x9, "a", "Likes cats", org.globex_agent)
    note(org.x9, "b", "likes cats", org.globex_agent)
    run(scope=org.globex)
    assert len(open_of("merge")) == 1
    proposal, _ = promotion
    proposal.refresh_from_db()
    assert proposal.state == "open"  # outside the scope: neither kept nor obsoleted


# --- approve and dismiss --------------------------------------------------------------


def test_approving_a_promotion_publishes_at_the_team_and_names_the_proposal(org, users, promotion):
    proposal, copies = promotion
    decided = decisions.approve(proposal, principal=users.p_owner, retire_copies=True)
    assert decided.state == "approved"
    [new] = decided.created
    assert new.scope == org.ops and new.author == "human" and new.promoted_from_id == copies[-1].id
    for copy in copies:
        copy.refresh_from_db()
        assert copy.retired_at is not None
    proposal.refresh_from_db()
    assert proposal.state == "approved" and proposal.decided_by == "user:owner"
    promoted = LedgerEvent.objects.get(kind="memory.promoted")
    assert promoted.payload["proposal"] == proposal.uid
    assert LedgerEvent.objects.filter(kind="memory.invalidated").count() == 2
    assert all(
        e.payload["proposal"] == proposal.uid
        for e in LedgerEvent.objects.filter(kind="memory.invalidated")
    )
    approved = LedgerEvent.objects.get(kind="proposal.approved")
    assert approved.payload["proposal"] == proposal.uid
    assert approved.payload["created"] == [new.uid]
    assert set(approved.payload["memories"]) == {c.uid for c in copies}
    assert "Berlin" not in str(approved.payload) and "tz" not in approved.payload.values()


def test_approving_without_retiring_keeps_the_copies(users, promotion):
    proposal, copies = promotion
    decisions.approve(proposal, principal=users.p_owner)
    assert Memory.objects.filter(pk__in=[c.pk for c in copies], retired_at=None).count() == 3


def test_an_auditor_may_not_approve_and_nothing_changes(users, promotion):
    proposal, _ = promotion
    with pytest.raises(Forbidden):
        decisions.approve(proposal, principal=users.p_auditor)
    proposal.refresh_from_db()
    assert proposal.state == "open"
    assert not LedgerEvent.objects.filter(kind__startswith="proposal.").exists()
    assert AccessLog.objects.filter(action="proposal.approve", outcome=403).count() == 1


def test_an_approval_whose_evidence_changed_closes_it_as_obsolete(org, users, promotion):
    proposal, copies = promotion
    curation.invalidate(copies[0], "wrong", principal=users.p_owner)
    decided = decisions.approve(proposal, principal=users.p_owner)
    assert decided.state == "obsolete"
    assert not Memory.objects.filter(scope=org.ops).exists()
    assert not LedgerEvent.objects.filter(kind="proposal.approved").exists()


def test_approving_a_merge_invalidates_the_other_keys(org, users):
    old = note(org.u1, "drink", "Prefers tea in the morning.", org.acme_agent)
    new = note(org.u1, "morning-drink", "in the morning, prefers tea", org.acme_agent)
    run()
    [merge] = open_of("merge")
    decisions.approve(merge, principal=users.p_owner)
    old.refresh_from_db()
    new.refresh_from_db()
    assert old.retired_reason == "invalidated" and new.retired_at is None
    assert merge.uid in old.retired_note


def test_approving_a_shadowed_review_invalidates_the_conclusions(org, team, users):
    wide = writes.publish(org.acme, "units", "kilometres", principal=users.p_owner)
    for actor in (org.u1, team["u3"], team["u4"]):
        note(actor, "units", "miles", org.acme_agent)
    run()
    [review] = open_of("shadowed")
    decisions.approve(review, principal=users.p_owner)
    assert Memory.objects.filter(key="units", author="agent", retired_at=None).count() == 0
    wide.refresh_from_db()
    assert wide.retired_at is None


def test_approving_a_shadowed_review_can_correct_the_wide_value(org, team, users):
    wide = writes.publish(org.acme, "units", "kilometres", principal=users.p_owner)
    for actor in (org.u1, team["u3"], team["u4"]):
        note(actor, "units", "miles", org.acme_agent)
    run()
    [review] = open_of("shadowed")
    with pytest.raises(Invalid):
        decisions.approve(review, principal=users.p_owner, resolution="correct", text="")
    review.refresh_from_db()
    assert review.state == "open"
    decided = decisions.approve(review, principal=users.p_owner, resolution="correct", text="miles")
    assert decided.created[0].text == "miles" and decided.created[0].supersedes_id == wide.id
    assert Memory.objects.filter(key="units", author="agent", retired_at=None).count() == 3


# --- approving a promotion over a live value ------------------------------------------


@pytest.fixture
def currency(org, team, operator):
    """Agents for u1-u4 concluded "euros"; alice, a person, states "US dollars" (tagged
    finance) at tenant:acme. The pass proposes the euros at the tenant (u2 is in no team)
    and a review of alice's value."""
    from django.contrib.auth import get_user_model

    from memory_core.accounts.grants import grant
    from memory_core.accounts.principals import Principal

    alice = get_user_model().objects.create_user("alice", "al@x.test", "pw-alice-123")
    grant("alice", org.acme, "admin", principal=operator)
    policy = writes.publish(
        org.acme,
        "currency",
        "quote prices in US dollars",
        principal=Principal.for_user(alice),
        tags=["finance"],
    )
    copies = [
        note(actor, "currency", "quote prices in euros", org.acme_agent)
        for actor in (org.u1, org.u2, team["u3"], team["u4"])
    ]
    run()
    proposal = Proposal.objects.get(kind="promote", scope=org.acme, state=ProposalState.OPEN)
    [review] = open_of("shadowed")
    assert review.scope_id == org.acme.id
    return proposal, review, policy, copies


def slot_versions(org):
    return Memory.objects.filter(scope=org.acme, key="currency").count()


def test_a_plain_approval_over_a_persons_value_is_refused_and_changes_nothing(org, users, currency):
    proposal, _, policy, _ = currency
    with pytest.raises(Invalid, match="already holds a value") as refused:
        decisions.approve(proposal, principal=users.p_owner)
    assert policy.uid in refused.value.message and "dollars" not in refused.value.message
    policy.refresh_from_db()
    assert policy.retired_at is None and policy.tags == ["finance"]
    assert slot_versions(org) == 1  # no new version
    proposal.refresh_from_db()
    assert proposal.state == "open"
    assert not LedgerEvent.objects.filter(kind__in=["proposal.approved", "memory.promoted"])
    row = AccessLog.objects.get(action="proposal.approve")
    assert row.outcome == 422 and row.detail == {"reason": "target_holds_value"}


def test_a_bulk_approval_refuses_a_promotion_over_a_live_value(org, users, currency):
    proposal, _, policy, _ = currency
    _, [outcome] = decisions.approve_many(
        [proposal.uid], principal=users.p_owner, lookup=lambda uid: proposal
    )
    assert outcome.status == 422 and "already holds a value" in outcome.message
    assert slot_versions(org) == 1
    proposal.refresh_from_db()
    assert proposal.state == "open"


def test_replacing_explicitly_supersedes_the_value_and_keeps_its_tags(org, users, currency):
    proposal, _, policy, copies = currency
    decided = decisions.approve(proposal, principal=users.p_owner, replace=policy.uid)
    assert decided.state == "approved" and decided.replaced == policy
    [new] = decided.created
    assert (new.text, new.author, new.scope) == ("quote prices in euros", "human", org.acme)
    assert new.tags == ["finance"] and new.supersedes_id == policy.id
    policy.refresh_from_db()
    assert policy.retired_at is not None and policy.retired_reason == "superseded"
    assert slot_versions(org) == 2
    assert Memory.objects.get(scope=org.acme, key="currency", retired_at=None) == new
    approved = LedgerEvent.objects.get(kind="proposal.approved")
    assert approved.payload["supersedes"] == policy.uid
    assert policy.uid in approved.payload["retired"]
    promoted = LedgerEvent.objects.get(kind="memory.promoted")
    assert promoted.payload["supersedes"] == policy.uid
    assert promoted.payload["proposal"] == proposal.uid


def test_replacing_a_version_that_is_no_longer_the_live_one_is_refused(org, users, currency):
    proposal, _, policy, _ = currency
    corrected = writes.correct(policy, "quote prices in pounds", principal=users.p_owner)
    with pytest.raises(Invalid, match="changed since you chose"):
        decisions.approve(proposal, principal=users.p_owner, replace=policy.uid)
    assert Memory.objects.get(scope=org.acme, key="currency", retired_at=None) == corrected
    curation.invalidate(corrected, "no policy", principal=users.p_owner)
    with pytest.raises(Invalid, match="no longer live"):
        decisions.approve(proposal, principal=users.p_owner, replace=corrected.uid)
    proposal.refresh_from_db()
    assert proposal.state == "open"
    assert not LedgerEvent.objects.filter(kind="proposal.approved").exists()
    decided = decisions.approve(proposal, principal=users.p_owner)  # nothing left to replace
    assert decided.state == "approved" and decided.replaced is None


def test_a_promotion_lands_on_the_live_value_and_names_the_contradicting_review(
    org, users, currency
):
    from memory_core.garden import reads

    proposal, review, policy, _ = currency
    [landing] = reads.landings(users.owner, [proposal]).values()
    assert landing.current == policy and landing.rivals == [review]
    # An auditor of another tenant reads neither.
    assert reads.landings(users.outsider, []) == {}


def test_dismissing_needs_a_reason_and_is_ledgered(users, promotion):
    proposal, _ = promotion
    with pytest.raises(Invalid):
        decisions.dismiss(proposal, "  ", principal=users.p_owner)
    decisions.dismiss(proposal, "time zones are personal", principal=users.p_owner)
    proposal.refresh_from_db()
    assert proposal.state == "dismissed" and proposal.note == "time zones are personal"
    event = LedgerEvent.objects.get(kind="proposal.dismissed")
    assert event.payload["proposal"] == proposal.uid
    assert event.payload["reason_chars"] == len("time zones are personal")
    assert "personal" not in str(event.payload)
    with pytest.raises(Invalid):
        decisions.approve(proposal, principal=users.p_owner)


# --- forget ---------------------------------------------------------------------------


def test_forgetting_an_evidence_memory_obsoletes_the_proposal_and_leaves_no_count(users, promotion):
    proposal, copies = promotion
    forgetting.forget(copies[0], principal=users.p_owner)
    proposal.refresh_from_db()
    assert proposal.state == "obsolete"
    assert not ProposalEvidence.objects.filter(memory_id=copies[0].id).exists()
    assert evidence_ids(proposal) == {c.id for c in copies[1:]}


def test_forgetting_leaves_decided_proposals_without_the_memory(users, promotion):
    proposal, copies = promotion
    decisions.dismiss(proposal, "no", principal=users.p_owner)
    forgetting.forget(copies[1], principal=users.p_owner)
    proposal.refresh_from_db()
    assert proposal.state == "dismissed"
    assert copies[1].id not in evidence_ids(proposal)


# --- health and the command -----------------------------------------------------------


def test_health_counts_never_shown_memories_and_budget_pressure(org):
    for n in range(3):
        note(org.u1, f"k{n}", f"fact number {n} about work", org.acme_agent)
    turns.resolve_turn(org.u1, "run-1", principal=org.acme_agent, max_memories=1)
    run()
    health = ScopeHealth.objects.get(scope=org.u1.scope)
    assert health.live == 3 and health.never_shown == 2
    assert health.turns == 1 and health.omitting_turns == 1 and health.omitted == 2


def test_garden_command_prints_the_table_and_progress(org, team):
    for actor in (org.u1, team["u3"], team["u4"]):
        note(actor, "tz", "Works in the Berlin time zone.", org.acme_agent)
    out, err = StringIO(), StringIO()
    call_command("garden", "--dry-run", stdout=out, stderr=err)
    assert "dry run" in out.getvalue()
    assert "garden steps" in err.getvalue()
    assert not Proposal.objects.exists()
    out = StringIO()
    call_command("garden", "--scope", "team:acme/ops", stdout=out, stderr=StringIO())
    lines = out.getvalue().splitlines()
    promote = next(line for line in lines if line.startswith("promote"))
    assert promote.split()[1:3] == ["1", "1"]
    assert Proposal.objects.filter(kind="promote", scope=org.ops).count() == 1


def test_garden_command_refuses_an_unknown_scope(db):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError):
        call_command("garden", "--scope", "team:nowhere", stdout=StringIO(), stderr=StringIO())


# --- the semantic half (an embedder configured) ---------------------------------------


@pytest.fixture
def same_meaning(settings):
    """An http embedder whose vectors all point one way: every text means the same."""
    from tests.embedding_server import EmbeddingServer

    with EmbeddingServer(mode="same") as server:
        use_server(settings, server)
        yield server


def test_semantic_merge_joins_texts_with_no_word_in_common(org, same_meaning):
    a = note(org.u1, "drink", "Prefers tea", org.acme_agent)
    b = note(org.u1, "beverage", "Likes a cuppa", org.acme_agent)
    note(org.u2, "other", "Unrelated person", org.acme_agent)
    run()
    [merge] = open_of("merge")
    assert dict(merge.evidence.values_list("memory_id", "role")) == {b.id: "keep", a.id: "drop"}


def test_semantic_promotion_joins_differently_worded_copies(org, team, same_meaning):
    copies = [
        note(org.u1, "tz", "Berlin time", org.acme_agent),
        note(team["u3"], "tz", "Central European Time", org.acme_agent),
        note(team["u4"], "tz", "CET, like Germany", org.acme_agent),
    ]
    run()
    [at_team] = [p for p in open_of("promote") if p.scope_id == org.ops.id]
    assert evidence_ids(at_team) == {c.id for c in copies}


def test_without_an_embedder_differently_worded_texts_stay_apart(org, team):
    note(org.u1, "drink", "Prefers tea", org.acme_agent)
    note(org.u1, "beverage", "Likes a cuppa", org.acme_agent)
    for actor, text in ((org.u1, "Berlin time"), (team["u3"], "CET"), (team["u4"], "Germany")):
        note(actor, "tz", text, org.acme_agent)
    run()
    assert open_of("merge") == [] and open_of("promote") == []
