"""The memory page's undo actions (reinstate, revert) and tags: views over memory_core.undo
and curation.set_tags, refusals as pages and log rows."""

import pytest

from memory_core import curation, writes
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
