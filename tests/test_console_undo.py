"""The memory page's undo actions (reinstate, revert), its republish choices (pin, retiring
the original) and tags: views over memory_core.undo, writes.promote and curation, refusals as
pages and log rows."""

import re

import pytest

from memory_core import curation, turns, writes
from memory_core.models import LedgerEvent, Memory
from tests.helpers import refusals


@pytest.fixture
def policy(users, org):
    return writes.publish(org.acme, "fiscal-year", "starts in October", principal=users.p_owner)


@pytest.fixture
def invalidated(users, policy):
    return curation.invalidate(policy, "wrong <b>really</b>", principal=users.p_owner)


@pytest.fixture
def corrected(users, policy):
    return writes.correct(policy, "starts in <April>", principal=users.p_owner)


def _post(client, user, memory, action, data=None, **extra):
    client.force_login(user)
    return client.post(f"/memories/{memory.uid}/{action}/", data or {}, **extra)


def _live():
    return Memory.objects.get(key="fiscal-year", retired_at=None)


def test_invalidated_memory_page_offers_reinstate_to_its_admin_only(client, users, invalidated):
    client.force_login(users.owner)
    page = client.get(f"/memories/{invalidated.uid}/").content.decode()
    assert f'action="/memories/{invalidated.uid}/reinstate/"' in page
    client.force_login(users.auditor)
    page = client.get(f"/memories/{invalidated.uid}/").content.decode()
    assert "/reinstate/" not in page


def test_reinstate_redirects_to_the_new_live_version(client, users, invalidated):
    response = _post(client, users.owner, invalidated, "reinstate")
    new = _live()
    assert response.status_code == 302 and response["Location"] == f"/memories/{new.uid}/"
    assert new.text == "starts in October" and new.supersedes_id == invalidated.pk
    assert LedgerEvent.objects.get(kind="memory.reinstated").payload["restores"] == (
        invalidated.uid
    )
    page = client.get(response["Location"]).content.decode()
    assert "Reinstated" in page


def test_reinstate_with_htmx_swaps_the_page_and_follows_in_the_address_bar(
    client, users, invalidated
):
    response = _post(client, users.owner, invalidated, "reinstate", HTTP_HX_REQUEST="true")
    new = _live()
    assert response.status_code == 200
    assert response["HX-Push-Url"] == f"/memories/{new.uid}/"
    assert 'id="memory-content"' in response.content.decode()


def test_reinstate_refused_when_the_slot_is_taken_is_422_beside_the_form(
    client, users, org, invalidated
):
    writes.publish(org.acme, "fiscal-year", "starts in April", principal=users.p_owner)
    events = LedgerEvent.objects.count()
    response = _post(client, users.owner, invalidated, "reinstate")
    assert response.status_code == 422
    assert "another live value" in response.content.decode()
    assert LedgerEvent.objects.count() == events


def test_reinstate_by_auditor_is_403_and_logged(client, users, invalidated):
    events = LedgerEvent.objects.count()
    response = _post(client, users.auditor, invalidated, "reinstate")
    assert response.status_code == 403
    assert LedgerEvent.objects.count() == events
    assert refusals("reinstate", 403, "user:auditor").exists()


@pytest.mark.parametrize("action", ["reinstate", "revert", "tags"])
def test_undo_actions_of_an_unreadable_memory_are_404(client, users, invalidated, action):
    events = LedgerEvent.objects.count()
    response = _post(client, users.outsider, invalidated, action, {"version": "x", "tags": "a"})
    assert response.status_code == 404
    assert LedgerEvent.objects.count() == events


@pytest.mark.parametrize("action", ["reinstate", "revert", "tags"])
def test_a_get_of_an_undo_action_is_sent_to_the_memory_page(client, users, policy, action):
    client.force_login(users.owner)
    response = client.get(f"/memories/{policy.uid}/{action}/")
    assert response.status_code == 303 and response["Location"] == f"/memories/{policy.uid}/"


def test_live_memory_page_offers_revert_to_each_earlier_text(client, users, policy, corrected):
    client.force_login(users.owner)
    page = client.get(f"/memories/{corrected.uid}/").content.decode()
    assert f'<option value="{policy.uid}"' in page
    assert "starts in &lt;April&gt;" in page and "<April>" not in page


def test_revert_writes_the_earlier_text_and_names_it(client, users, policy, corrected):
    response = _post(client, users.owner, corrected, "revert", {"version": policy.uid})
    new = _live()
    assert response.status_code == 302 and response["Location"] == f"/memories/{new.uid}/"
    assert new.text == "starts in October"
    event = LedgerEvent.objects.get(kind="memory.reverted")
    assert event.payload["restores"] == policy.uid and event.payload["supersedes"] == corrected.uid


def test_revert_to_a_version_of_another_memory_is_422(client, users, org, corrected):
    other = writes.publish(org.acme, "other", "something", principal=users.p_owner)
    events = LedgerEvent.objects.count()
    response = _post(client, users.owner, corrected, "revert", {"version": other.uid})
    assert response.status_code == 422
    assert "choose an earlier version" in response.content.decode()
    assert LedgerEvent.objects.count() == events and _live().pk == corrected.pk


def test_revert_by_auditor_is_403_and_logged(client, users, policy, corrected):
    response = _post(client, users.auditor, corrected, "revert", {"version": policy.uid})
    assert response.status_code == 403
    assert _live().pk == corrected.pk
    assert refusals("revert", 403, "user:auditor").exists()


def test_tags_are_saved_in_place(client, users, policy):
    response = _post(client, users.owner, policy, "tags", {"tags": "finance, calendar"})
    assert response.status_code == 302
    assert Memory.objects.get(pk=policy.pk).tags == ["finance", "calendar"]
    assert LedgerEvent.objects.get(kind="memory.tagged").payload == {
        "memory": policy.uid,
        "count": 2,
    }


def test_bad_tags_are_422_and_change_nothing(client, users, policy):
    response = _post(client, users.owner, policy, "tags", {"tags": "Bad<Tag>"})
    assert response.status_code == 422
    assert "Bad&lt;Tag&gt;" in response.content.decode()
    assert Memory.objects.get(pk=policy.pk).tags == []


def test_tags_by_auditor_are_403_and_logged(client, users, policy):
    response = _post(client, users.auditor, policy, "tags", {"tags": "x"})
    assert response.status_code == 403
    assert Memory.objects.get(pk=policy.pk).tags == []
    assert refusals("tag", 403, "user:auditor").exists()


# --- undo keeps who said it: reinstating an agent's conclusion -----------------------------


@pytest.fixture
def conclusion(org):
    """An agent's conclusion about acme/u1, learned in thread t-1, run r-1."""
    return writes.remember(
        org.u1,
        "timezone",
        "works in CET",
        principal=org.acme_agent,
        run_id="r-1",
        tool_call_id="c-1",
        thread_id="t-1",
    ).memory


def _sections(block: str) -> tuple[str, str]:
    """The block's people section and its agent section."""
    people, _, agent = block.partition("Concluded by you.")
    return people, agent


def test_reinstating_an_agents_conclusion_keeps_it_the_agents(client, users, org, conclusion):
    curation.invalidate(conclusion, "not sure", principal=users.p_owner)
    response = _post(client, users.owner, conclusion, "reinstate")
    new = Memory.objects.get(key="timezone", retired_at=None)
    assert response.status_code == 302 and response["Location"] == f"/memories/{new.uid}/"
    assert new.author == "agent" and new.origin_user is None
    assert new.origin_actor_id == org.u1.pk
    assert (new.origin_thread, new.origin_run) == ("t-1", "r-1")
    event = LedgerEvent.objects.get(kind="memory.reinstated")
    assert event.principal == "user:owner"  # who brought it back
    assert event.payload == {"memory": new.uid, "restores": conclusion.uid, "chars": 12}
    # In the prompt it is still the agent's conclusion, not an instruction from a person.
    block = turns.preview_turn(org.u1, principal=org.acme_agent).block
    people, agent = _sections(block)
    assert "[actor:acme/u1] timezone: works in CET" in agent
    assert "timezone" not in people
    page = client.get(f"/memories/{new.uid}/").text
    assert "Stated by a person" not in page


def test_the_reinstate_form_says_whose_the_memory_stays(client, users, conclusion):
    curation.invalidate(conclusion, "not sure", principal=users.p_owner)
    client.force_login(users.owner)
    page = client.get(f"/memories/{conclusion.uid}/").text
    assert "with its own author and origin (still an agent's conclusion)" in page


# --- republish: the pin and the original, both chosen on the form ---------------------------


def test_the_republish_form_states_the_pin_and_retire_defaults(client, users, conclusion):
    curation.set_pinned(conclusion, True, principal=users.p_owner)
    client.force_login(users.owner)
    page = client.get(f"/memories/{conclusion.uid}/").text
    form = page.split('id="republish"', 1)[1].split("</section>", 1)[0]
    assert re.search(r'name="pin" value="yes" checked', form)
    assert not re.search(r'name="pin" value="no" checked', form)
    assert "Default: as this memory is (pinned)" in form
    assert re.search(r'name="retire_original" checked', form)
    assert "Ticked by default, here and in a bulk republish" in form


@pytest.mark.parametrize(
    "pin, pinned_after",
    [("yes", True), ("no", False), (None, True)],  # not sent: as the original (pinned)
)
def test_republish_pins_the_new_memory_as_chosen(client, users, org, conclusion, pin, pinned_after):
    curation.set_pinned(conclusion, True, principal=users.p_owner)
    data = {"target": "tenant:acme", "text": "Acme works in CET"}
    if pin is not None:
        data["pin"] = pin
    response = _post(client, users.owner, conclusion, "republish", data)
    new = Memory.objects.get(scope=org.acme, key="timezone")
    assert response.status_code == 302 and new.pinned is pinned_after
    event = LedgerEvent.objects.get(kind="memory.promoted")
    assert event.payload["pinned"] is pinned_after


def test_republish_does_not_copy_the_pin_of_the_value_it_replaces_unasked(
    client, users, org, conclusion
):
    wide = writes.publish(org.acme, "timezone", "UTC", principal=users.p_owner, pinned=True)
    _post(client, users.owner, conclusion, "republish", {"target": "tenant:acme", "pin": "no"})
    new = Memory.objects.get(scope=org.acme, key="timezone", retired_at=None)
    assert new.supersedes_id == wide.pk and not new.pinned


def test_republish_with_a_bad_pin_choice_is_422_and_writes_nothing(client, users, conclusion):
    response = _post(
        client, users.owner, conclusion, "republish", {"target": "tenant:acme", "pin": "maybe"}
    )
    assert response.status_code == 422
    assert not LedgerEvent.objects.filter(kind="memory.promoted").exists()


# --- bulk: republish's options, reinstate, and "Undo this bulk" ------------------------------


def _bulk(client, user, action, memories, **extra):
    """A confirmed bulk action; the id of the bulk its 303 names."""
    client.force_login(user)
    response = client.post(
        "/memories/bulk/",
        {"action": action, "m": [m.uid for m in memories], "confirm": "1", **extra},
    )
    assert response.status_code == 303, response.content.decode()[:500]
    return response["Location"].split("/")[3]


@pytest.fixture
def conclusions(org):
    """Two agents' conclusions at two actors of acme."""
    return [
        writes.remember(
            actor, "timezone", f"{actor.ref} works in CET", principal=org.acme_agent
        ).memory
        for actor in (org.u1, org.u2)
    ]


def test_the_bulk_republish_review_states_the_pin_and_retire_defaults(client, users, conclusions):
    client.force_login(users.owner)
    review = client.get(
        "/memories/bulk/", {"action": "republish", "m": [m.uid for m in conclusions]}
    ).text
    assert re.search(r'<option value="original" selected>as each original is \(default\)', review)
    assert re.search(r'name="retire_original" id="bulk-retire" checked', review)
    assert "Ticked by default, as on a memory's own republish form" in review


def test_bulk_republish_retires_the_originals_as_the_single_one_does(
    client, users, org, conclusions
):
    curation.set_pinned(conclusions[0], True, principal=users.p_owner)
    bulk_id = _bulk(
        client,
        users.owner,
        "republish",
        conclusions[:1],
        target="tenant:acme",
        pin="original",
        retire_original="on",
    )
    original = Memory.objects.get(pk=conclusions[0].pk)
    assert original.retired_reason == "promoted"
    new = Memory.objects.get(scope=org.acme, key="timezone")
    assert new.pinned and new.promoted_from_id == original.pk
    event = LedgerEvent.objects.get(kind="memory.promoted")
    assert event.payload["retired_original"] is True and event.payload["bulk"] == bulk_id
    report = client.get(f"/memories/bulk/{bulk_id}/").text
    assert "the original retired" in report and "originals retired" in report


def test_bulk_republish_keeps_the_originals_and_pins_as_told_when_asked(
    client, users, org, conclusions
):
    curation.set_pinned(conclusions[0], True, principal=users.p_owner)
    _bulk(client, users.owner, "republish", conclusions[:1], target="tenant:acme", pin="no")
    assert Memory.objects.get(pk=conclusions[0].pk).retired_at is None
    assert not Memory.objects.get(scope=org.acme, key="timezone").pinned


def test_bulk_republish_with_a_bad_pin_choice_is_422_and_writes_nothing(client, users, conclusions):
    client.force_login(users.owner)
    response = client.post(
        "/memories/bulk/",
        {
            "action": "republish",
            "m": [conclusions[0].uid],
            "confirm": "1",
            "target": "tenant:acme",
            "pin": "sometimes",
        },
    )
    assert response.status_code == 422
    assert not LedgerEvent.objects.filter(kind="memory.promoted").exists()


def test_bulk_reinstate_brings_invalidated_memories_back_with_their_authors(
    client, users, org, conclusions, policy
):
    for memory in [*conclusions, policy]:
        curation.invalidate(memory, "checking", principal=users.p_owner)
    client.force_login(users.owner)
    finder = client.get("/memories/", {"state": "invalidated"}).text
    assert '<option value="reinstate">' in finder
    bulk_id = _bulk(client, users.owner, "reinstate", [*conclusions, policy])
    live = Memory.objects.live().filter(key__in=["timezone", "fiscal-year"])
    assert sorted((m.key, m.author) for m in live) == [
        ("fiscal-year", "human"),
        ("timezone", "agent"),
        ("timezone", "agent"),
    ]
    events = LedgerEvent.objects.filter(kind="memory.reinstated")
    assert events.count() == 3
    assert {(e.principal, e.payload["bulk"]) for e in events} == {("user:owner", bulk_id)}
    report = client.get(f"/memories/bulk/{bulk_id}/").text
    assert "Reinstate: 3 of 3 done" in report


def test_bulk_reinstate_reports_a_live_memory_and_a_taken_slot(client, users, org, policy):
    stale = writes.publish(org.acme, "holiday", "in August", principal=users.p_owner)
    curation.invalidate(stale, "wrong", principal=users.p_owner)
    writes.publish(org.acme, "holiday", "in July", principal=users.p_owner)
    bulk_id = _bulk(client, users.owner, "reinstate", [stale, policy])
    report = client.get(f"/memories/bulk/{bulk_id}/").text
    assert "0 of 2 done" in report
    assert "another live value now holds its key at that scope" in report
    assert "not invalidated: nothing to reinstate" in report
    assert not LedgerEvent.objects.filter(kind="memory.reinstated").exists()


def _undo(client, user, bulk_id):
    client.force_login(user)
    return client.post(f"/memories/bulk/{bulk_id}/undo/")


def test_undo_this_bulk_reverts_each_change_as_a_new_bulk(client, users, org, conclusions):
    bulk_id = _bulk(client, users.owner, "pin", conclusions)
    report = client.get(f"/memories/bulk/{bulk_id}/").text
    assert f'href="/memories/bulk/{bulk_id}/undo/"' in report
    review = client.get(f"/memories/bulk/{bulk_id}/undo/").text
    assert "Undo 2 changes" in review and "unpin it" in review
    assert "acme/u1 works in CET" in review  # each memory's text, before anything runs
    assert not LedgerEvent.objects.filter(kind="memory.unpinned").exists()

    response = _undo(client, users.owner, bulk_id)
    assert response.status_code == 303
    undo_id = response["Location"].split("/")[3]
    assert undo_id != bulk_id
    assert not Memory.objects.filter(pinned=True).exists()
    events = LedgerEvent.objects.filter(kind="memory.unpinned")
    assert {e.payload["memory"] for e in events} == {m.uid for m in conclusions}
    assert {e.payload["bulk"] for e in events} == {undo_id}
    undone = client.get(response["Location"]).text
    assert "Undo: 2 of 2 done" in undone and "This bulk undid" in undone
    assert "unpinned again" in undone
    assert "Undone by" in client.get(f"/memories/bulk/{bulk_id}/").text
    # A second undo (a reload of the form, a second tab) is refused and changes nothing.
    count = LedgerEvent.objects.count()
    again = _undo(client, users.owner, bulk_id)
    assert again.status_code == 422 and "undone already" in again.content.decode()
    assert LedgerEvent.objects.count() == count


def test_undo_leaves_members_changed_since_and_reports_them(client, users, org, conclusions):
    bulk_id = _bulk(client, users.owner, "invalidate", conclusions, reason="checking")
    # Since: u2's key was written again by its agent; u1's invalidation is still as it was.
    writes.remember(org.u2, "timezone", "works in PST now", principal=org.acme_agent)
    review = client.get(f"/memories/bulk/{bulk_id}/undo/").text
    assert "Undo 1 change" in review and "skip: changed since the bulk" in review
    response = _undo(client, users.owner, bulk_id)
    report = client.get(response["Location"]).text
    assert "Undo: 1 of 2 done" in report and "changed since the bulk: left as it is" in report
    live = {m.origin_actor.ref: m for m in Memory.objects.live().filter(key="timezone")}
    assert live["acme/u1"].text == "acme/u1 works in CET" and live["acme/u1"].author == "agent"
    assert live["acme/u2"].text == "works in PST now"
    assert LedgerEvent.objects.filter(kind="memory.reinstated").count() == 1


def test_undo_of_a_republish_brings_back_what_it_replaced_and_the_originals(
    client, users, org, conclusions
):
    before = writes.publish(org.acme, "timezone", "Acme is on UTC", principal=users.p_owner)
    bulk_id = _bulk(
        client,
        users.owner,
        "republish",
        conclusions[:1],
        target="tenant:acme",
        retire_original="on",
    )
    assert Memory.objects.get(pk=conclusions[0].pk).retired_reason == "promoted"
    response = _undo(client, users.owner, bulk_id)
    assert response.status_code == 303
    at_acme = Memory.objects.live().get(scope=org.acme, key="timezone")
    assert at_acme.text == "Acme is on UTC" and at_acme.origin_user == "owner"
    assert at_acme.lineage == before.lineage
    back = Memory.objects.live().get(scope=org.u1.scope, key="timezone")
    assert back.author == "agent" and back.supersedes_id == conclusions[0].pk
    assert "Undo: 1 of 1 done" in client.get(response["Location"]).text


def test_undo_of_a_republish_with_nothing_replaced_invalidates_the_copy(
    client, users, org, conclusions
):
    bulk_id = _bulk(client, users.owner, "republish", conclusions[:1], target="tenant:acme")
    _undo(client, users.owner, bulk_id)
    copy = Memory.objects.get(scope=org.acme, key="timezone")
    assert copy.retired_reason == "invalidated" and copy.retired_note == f"undoing bulk {bulk_id}"
    assert Memory.objects.get(pk=conclusions[0].pk).retired_at is None


def test_a_forget_bulk_cannot_be_undone(client, users, conclusions):
    bulk_id = _bulk(client, users.owner, "forget", conclusions, typed="2")
    report = client.get(f"/memories/bulk/{bulk_id}/").text
    assert "/undo/" not in report and "Forgetting cannot be undone" in report
    response = _undo(client, users.owner, bulk_id)
    assert response.status_code == 422 and "cannot be undone" in response.content.decode()


def test_undo_of_another_tenants_bulk_is_404_and_changes_nothing(client, users, conclusions):
    bulk_id = _bulk(client, users.owner, "pin", conclusions)
    assert _undo(client, users.outsider, bulk_id).status_code == 404
    assert Memory.objects.filter(pinned=True).count() == 2
    assert refusals("bulk.undo", 404, "user:outsider").exists()


def test_a_get_of_the_undo_runs_nothing(client, users, conclusions):
    bulk_id = _bulk(client, users.owner, "pin", conclusions)
    events = LedgerEvent.objects.count()
    for _ in range(2):
        assert client.get(f"/memories/bulk/{bulk_id}/undo/").status_code == 200
    assert LedgerEvent.objects.count() == events
    assert Memory.objects.filter(pinned=True).count() == 2


def test_a_conflicts_republish_asks_about_the_pin_too(client, users, org, conclusion):
    wide = writes.publish(org.acme, "timezone", "UTC", principal=users.p_owner, pinned=True)
    client.force_login(users.owner)
    page = client.get("/conflicts/").text
    assert "Pin timezone of actor:acme/u1 at the wider scope?" in page
    assert re.search(r'name="pin" value="no" checked', page)  # as the narrower value is
    client.post(
        f"/conflicts/{conclusion.uid}/{wide.uid}/republish/",
        {"target": "tenant:acme", "pin": "no", "next": "/conflicts/"},
    )
    new = Memory.objects.get(scope=org.acme, key="timezone", retired_at=None)
    assert new.supersedes_id == wide.pk and not new.pinned
