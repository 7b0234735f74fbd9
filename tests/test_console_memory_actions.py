"""The memory page's actions: each one core service, refusals as pages and log rows."""

import re

import pytest
from django.test import Client

from memory_core import turns, writes
from memory_core.models import DigestLine, LedgerEvent, Memory
from tests.helpers import refusals


@pytest.fixture
def policy(users, org):
    return writes.publish(org.acme, "fiscal-year", "starts in October", principal=users.p_owner)


@pytest.fixture
def learned(org):
    return writes.remember(org.u1, "tz", "works in CET", principal=org.acme_agent).memory


def _post(client, user, memory, action, data=None):
    client.force_login(user)
    return client.post(f"/memories/{memory.uid}/{action}/", data or {})


def _fresh(memory):
    return Memory.objects.get(pk=memory.pk)


ACTIONS = [
    ("correct", {"text": "starts in April"}),
    ("republish", {"target": "global", "text": "starts in October"}),
    ("pin", {}),
    ("unpin", {}),
    ("invalidate", {"reason": "not true"}),
    ("forget", {"confirm_key": "fiscal-year"}),
]


# --- the matrix: anonymous, outsider, auditor are refused and nothing changes ------------


@pytest.mark.parametrize("action, data", ACTIONS)
def test_anonymous_action_is_sent_to_login_and_changes_nothing(client, users, policy, action, data):
    events = LedgerEvent.objects.count()
    response = client.post(f"/memories/{policy.uid}/{action}/", data)
    assert response.status_code == 302 and response["Location"].startswith("/login/")
    assert LedgerEvent.objects.count() == events
    assert _fresh(policy).retired_at is None


@pytest.mark.parametrize("action, data", ACTIONS)
def test_outsider_action_is_404_and_changes_nothing(client, users, policy, action, data):
    events = LedgerEvent.objects.count()
    response = _post(client, users.outsider, policy, action, data)
    assert response.status_code == 404
    assert LedgerEvent.objects.count() == events
    assert _fresh(policy).retired_at is None


@pytest.mark.parametrize("action, data", ACTIONS)
def test_auditor_action_is_403_changes_nothing_and_is_logged(client, users, policy, action, data):
    events = LedgerEvent.objects.count()
    response = _post(client, users.auditor, policy, action, data)
    assert response.status_code == 403
    assert LedgerEvent.objects.count() == events
    assert Memory.objects.filter(key="fiscal-year").count() == 1
    assert not _fresh(policy).pinned and _fresh(policy).retired_at is None
    logged = {"republish": "promote"}.get(action, action)
    assert refusals(logged, 403, "user:auditor").exists()


@pytest.mark.parametrize("action", ["correct", "pin", "invalidate", "forget", "republish"])
def test_a_get_of_an_action_is_sent_to_the_memory_page(client, users, policy, action):
    client.force_login(users.owner)
    events = LedgerEvent.objects.count()
    response = client.get(f"/memories/{policy.uid}/{action}/")
    assert response.status_code == 303 and response["Location"] == f"/memories/{policy.uid}/"
    assert client.get(response["Location"]).status_code == 200
    assert LedgerEvent.objects.count() == events and _fresh(policy).retired_at is None


@pytest.mark.parametrize("action, data", ACTIONS)
def test_actions_without_csrf_token_are_refused(users, policy, action, data):
    client = Client(enforce_csrf_checks=True)
    client.force_login(users.owner)
    events = LedgerEvent.objects.count()
    response = client.post(f"/memories/{policy.uid}/{action}/", data)
    assert response.status_code == 403
    assert LedgerEvent.objects.count() == events
    assert Memory.objects.filter(pk=policy.pk, retired_at=None, pinned=False).exists()


def test_action_with_the_page_csrf_token_is_accepted(users, policy):
    client = Client(enforce_csrf_checks=True)
    client.force_login(users.owner)
    page = client.get(f"/memories/{policy.uid}/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    response = client.post(f"/memories/{policy.uid}/pin/", {"csrfmiddlewaretoken": token})
    assert response.status_code == 302
    assert _fresh(policy).pinned


# --- correct ---------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["owner", "su"])
def test_admin_corrects_with_a_new_human_version(client, users, org, learned, who):
    response = _post(client, getattr(users, who), learned, "correct", {"text": "works in EST"})
    new = Memory.objects.get(scope=org.u1.scope, key="tz", retired_at=None)
    assert response.status_code == 302 and response["Location"] == f"/memories/{new.uid}/"
    assert new.text == "works in EST" and new.author == "human"
    assert new.supersedes_id == learned.pk
    assert _fresh(learned).retired_reason == "superseded"
    assert LedgerEvent.objects.filter(kind="memory.corrected", payload__memory=new.uid).exists()
    assert "is the live version" in client.get(response["Location"]).text


def test_invalid_correction_rerenders_the_page_with_the_message(client, users, learned):
    response = _post(client, users.owner, learned, "correct", {"text": "line one\u2028line two"})
    assert response.status_code == 422
    assert "single line" in response.text
    assert _fresh(learned).retired_at is None
    assert Memory.objects.filter(key="tz").count() == 1


def test_correction_without_a_change_is_refused_with_a_message(client, users, learned):
    events = LedgerEvent.objects.count()
    response = _post(client, users.owner, learned, "correct", {"text": f" {learned.text} "})
    assert response.status_code == 422
    assert "same as the current text; nothing was changed" in response.text
    assert _fresh(learned).retired_at is None
    assert Memory.objects.filter(key="tz").count() == 1
    assert LedgerEvent.objects.count() == events
    assert refusals("correct", 422, "user:owner").exists()


def test_correcting_a_retired_version_is_404(client, users, learned):
    writes.correct(learned, "works in EST", principal=users.p_owner)
    response = _post(client, users.owner, learned, "correct", {"text": "again"})
    assert response.status_code == 404
    assert not Memory.objects.filter(text="again").exists()


# --- pin / unpin -----------------------------------------------------------------------


def test_owner_pins_and_unpins_with_ledger_events(client, users, policy):
    assert _post(client, users.owner, policy, "pin").status_code == 302
    assert _fresh(policy).pinned
    assert _post(client, users.owner, policy, "unpin").status_code == 302
    assert not _fresh(policy).pinned
    kinds = list(
        LedgerEvent.objects.filter(payload__memory=policy.uid)
        .order_by("id")
        .values_list("kind", flat=True)
    )
    assert kinds == ["memory.published", "memory.pinned", "memory.unpinned"]


# --- invalidate ------------------------------------------------------------------------


def test_owner_invalidates_with_a_reason(client, users, policy):
    response = _post(client, users.owner, policy, "invalidate", {"reason": "we moved to April"})
    assert response.status_code == 302
    fresh = _fresh(policy)
    assert fresh.retired_reason == "invalidated"
    assert fresh.retired_note == "we moved to April"
    assert LedgerEvent.objects.filter(kind="memory.invalidated").exists()


def test_invalidate_without_a_reason_is_422_and_changes_nothing(client, users, policy):
    response = _post(client, users.owner, policy, "invalidate", {"reason": "  "})
    assert response.status_code == 422
    assert "say why" in response.text
    assert _fresh(policy).retired_at is None


# --- republish wider -------------------------------------------------------------------


def test_owner_republishes_an_agent_memory_at_the_tenant(client, users, org, learned):
    response = _post(
        client,
        users.owner,
        learned,
        "republish",
        {"target": "tenant:acme", "text": "everyone at Acme works in CET"},
    )
    new = Memory.objects.get(scope=org.acme, key="tz")
    assert response.status_code == 302 and response["Location"] == f"/memories/{new.uid}/"
    assert new.author == "human" and new.origin_user == "owner"
    assert new.text == "everyone at Acme works in CET"
    assert new.promoted_from_id == learned.pk
    assert _fresh(learned).retired_at is None  # the original stays unless asked
    assert LedgerEvent.objects.filter(
        kind="memory.promoted", payload__promoted_from=learned.uid
    ).exists()
    # Linked both ways.
    client.force_login(users.owner)
    assert f'href="/memories/{learned.uid}/"' in client.get(f"/memories/{new.uid}/").text
    original = client.get(f"/memories/{learned.uid}/").text
    assert "Republished as" in original and f'href="/memories/{new.uid}/"' in original


def test_republish_can_retire_the_original(client, users, org, learned):
    _post(
        client,
        users.owner,
        learned,
        "republish",
        {"target": "team:acme/ops", "text": "works in CET", "retire_original": "on"},
    )
    assert Memory.objects.get(scope=org.ops, key="tz").promoted_from_id == learned.pk
    assert _fresh(learned).retired_reason == "promoted"


def test_republish_beyond_the_users_grant_is_403_and_logged(client, users, learned):
    response = _post(
        client, users.owner, learned, "republish", {"target": "global", "text": "works in CET"}
    )
    assert response.status_code == 403
    assert not Memory.objects.filter(scope__token="global", key="tz").exists()
    assert refusals("promote", 403, "user:owner").filter(scope="global").exists()


def test_republish_to_a_scope_not_offered_is_422(client, users, learned):
    response = _post(
        client, users.owner, learned, "republish", {"target": "actor:acme/u2", "text": "x"}
    )
    assert response.status_code == 422
    assert "choose one of the wider scopes" in response.text
    assert Memory.objects.filter(key="tz").count() == 1


# --- forget ----------------------------------------------------------------------------


@pytest.fixture
def in_prompts(users, org, learned):
    second = writes.correct(learned, "works in CET, mornings only", principal=users.p_owner)
    turns.resolve_turn(org.u1, "run-1", principal=org.acme_agent)
    return second


def test_forget_with_a_wrong_key_deletes_nothing(client, users, learned, in_prompts):
    response = _post(client, users.owner, in_prompts, "forget", {"confirm_key": "t z"})
    assert response.status_code == 422
    assert "nothing was forgotten" in response.text
    assert Memory.objects.filter(key="tz").count() == 2
    assert not LedgerEvent.objects.filter(kind="memory.forgotten").exists()


def test_forget_with_the_typed_key_erases_every_version_and_prompt_copy(
    client, users, learned, in_prompts
):
    response = _post(client, users.owner, in_prompts, "forget", {"confirm_key": "tz"})
    assert response.status_code == 302
    assert response["Location"] == "/scopes/actor:acme/u1/"
    assert not Memory.objects.filter(key="tz").exists()
    lines = DigestLine.objects.filter(memory_uid__in=[learned.uid, in_prompts.uid])
    assert lines.exists()
    assert all("CET" not in line.text for line in lines)
    assert LedgerEvent.objects.filter(kind="memory.forgotten").exists()
    landing = client.get(response["Location"]).text
    assert "Forgotten: 2 versions erased" in landing
    assert client.get(f"/memories/{in_prompts.uid}/").status_code == 404
