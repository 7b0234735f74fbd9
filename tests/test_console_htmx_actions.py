"""Inline actions with htmx: the same POSTs answer with the fragment htmx swaps in.

The memory page's forms swap #memory-content (the result inside it); republish and forget
answer with HX-Redirect; a conflicts-page row posts to its own endpoint
(/conflicts/<narrow>/<wide>/<action>/) and is replaced by a result row. Refusals and bad
values come back inside those fragments with status 200 (htmx swaps no 4xx answer). The
plain POST + redirect path is tested in test_console_memory_actions.py and
test_console_conflicts.py.
"""

import re

import pytest
from django.test import Client

from memory_core import turns, writes
from memory_core.models import AccessLog, LedgerEvent, Memory
from tests.helpers import refusals

HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def policy(users, org):
    return writes.publish(org.acme, "fiscal-year", "starts in October", principal=users.p_owner)


@pytest.fixture
def learned(org):
    return writes.remember(org.u1, "tz", "works in CET", principal=org.acme_agent).memory


def _hx_post(client, user, memory, action, data=None, **headers):
    client.force_login(user)
    return client.post(f"/memories/{memory.uid}/{action}/", data or {}, **HX, **headers)


def _fresh(memory):
    return Memory.objects.get(pk=memory.pk)


def _is_memory_fragment(response) -> bool:
    return response.text.strip().startswith('<div id="memory-content">') and (
        "<html" not in response.text
    )


def _notice(response) -> str:
    found = re.search(
        r'<ul class="flash"[^>]*>\s*<li class="([^"]+)">(.*?)</li>', response.text, re.S
    )
    assert found, "no notice in the fragment"
    return f"{found.group(1)}: {found.group(2)}"


# --- the memory page: pin, unpin, invalidate, correct swap #memory-content -------------


def test_htmx_pin_answers_the_memory_content_with_the_result(client, users, policy):
    response = _hx_post(client, users.owner, policy, "pin")
    assert response.status_code == 200
    assert _is_memory_fragment(response)
    assert _notice(response) == "flash-success: Pinned: always in the prompt."
    assert _fresh(policy).pinned
    assert LedgerEvent.objects.filter(kind="memory.pinned", payload__memory=policy.uid).exists()
    # The swapped content shows the new state: the badge, and the form that undoes it.
    assert '<span class="pin">pinned</span>' in response.text
    assert f'hx-post="/memories/{policy.uid}/unpin/"' in response.text
    assert f'hx-post="/memories/{policy.uid}/pin/"' not in response.text
    assert "HX-Request" in response["Vary"]


def test_htmx_result_is_not_flashed_again_on_the_next_page(client, users, policy):
    _hx_post(client, users.owner, policy, "pin")
    assert "Pinned: always in the prompt." not in client.get(f"/memories/{policy.uid}/").text


def test_htmx_unpin_swaps_the_pin_form_back(client, users, policy):
    _hx_post(client, users.owner, policy, "pin")
    response = _hx_post(client, users.owner, policy, "unpin")
    assert response.status_code == 200 and _is_memory_fragment(response)
    assert _notice(response) == "flash-success: Unpinned."
    assert not _fresh(policy).pinned
    assert f'hx-post="/memories/{policy.uid}/pin/"' in response.text


def test_htmx_invalidate_shows_the_retired_memory_without_its_forms(client, users, policy):
    response = _hx_post(client, users.owner, policy, "invalidate", {"reason": "we moved to April"})
    assert response.status_code == 200 and _is_memory_fragment(response)
    assert _notice(response) == "flash-success: Invalidated: it no longer reaches any prompt."
    fresh = _fresh(policy)
    assert fresh.retired_reason == "invalidated" and fresh.retired_note == "we moved to April"
    assert "retired · invalidated" in response.text
    assert "/invalidate/" not in response.text and "/pin/" not in response.text


def test_htmx_correct_shows_the_new_version_and_moves_the_address(client, users, org, learned):
    response = _hx_post(client, users.owner, learned, "correct", {"text": "works in EST"})
    new = Memory.objects.get(scope=org.u1.scope, key="tz", retired_at=None)
    assert response.status_code == 200 and _is_memory_fragment(response)
    assert response["HX-Push-Url"] == f"/memories/{new.uid}/"
    assert _notice(response) == (
        f"flash-success: Corrected: {new.uid} is the live version; {learned.uid} retired."
    )
    assert "works in EST" in response.text
    assert f'hx-post="/memories/{new.uid}/correct/"' in response.text
    assert new.author == "human" and new.supersedes_id == learned.pk
    assert _fresh(learned).retired_reason == "superseded"


# --- the memory page: errors come back inside the fragment -----------------------------


def test_htmx_invalidate_without_a_reason_shows_the_error_in_the_fragment(client, users, policy):
    response = _hx_post(client, users.owner, policy, "invalidate", {"reason": "  "})
    assert response.status_code == 200 and _is_memory_fragment(response)
    assert _notice(response) == "flash-error: That did not work: say why the memory is invalid"
    assert '<ul class="flash" role="alert">' in response.text
    # And beside the form that was sent, as on the plain page.
    assert '<p class="error" role="alert">say why the memory is invalid</p>' in response.text
    assert _fresh(policy).retired_at is None


def test_htmx_invalid_correction_keeps_the_typed_text(client, users, learned):
    response = _hx_post(client, users.owner, learned, "correct", {"text": "one\u2028two"})
    assert response.status_code == 200 and _is_memory_fragment(response)
    assert "single line" in _notice(response)
    assert 'value="one\u2028two"' in response.text
    assert Memory.objects.filter(key="tz").count() == 1


def test_htmx_auditor_pin_is_refused_inside_the_fragment_and_logged(client, users, policy):
    response = _hx_post(client, users.auditor, policy, "pin")
    assert response.status_code == 200 and _is_memory_fragment(response)
    assert _notice(response) == (
        "flash-error: Not allowed: you do not administer tenant:acme. "
        "This attempt has been recorded in the access log."
    )
    assert not _fresh(policy).pinned
    assert refusals("pin", 403, "user:auditor").exists()


def test_htmx_pin_of_a_retired_version_says_so(client, users, learned):
    writes.correct(learned, "works in EST", principal=users.p_owner)
    response = _hx_post(client, users.owner, learned, "pin")
    assert response.status_code == 200 and _is_memory_fragment(response)
    assert "no longer live" in _notice(response)
    assert not _fresh(learned).pinned


def test_htmx_outsider_gets_no_more_than_a_404_says(client, users, policy):
    response = _hx_post(client, users.outsider, policy, "pin")
    assert response.status_code == 200 and _is_memory_fragment(response)
    assert _notice(response) == "flash-error: Not found: nothing here, or nothing you may see."
    assert "fiscal-year" not in response.text and "October" not in response.text
    assert not _fresh(policy).pinned


def test_htmx_anonymous_is_sent_to_log_in_and_back_to_the_page(client, users, policy):
    response = client.post(
        f"/memories/{policy.uid}/pin/",
        **HX,
        HTTP_HX_CURRENT_URL=f"http://testserver/memories/{policy.uid}/",
    )
    assert response.status_code == 200
    assert response["HX-Redirect"] == f"/login/?next=/memories/{policy.uid}/"
    assert not _fresh(policy).pinned


def test_htmx_post_needs_the_csrf_token_and_takes_it_from_the_body_header(users, policy):
    client = Client(enforce_csrf_checks=True)
    client.force_login(users.owner)
    page = client.get(f"/memories/{policy.uid}/").text
    token = re.search(r"hx-headers='\{\"X-CSRFToken\": \"([^\"]+)\"\}'", page).group(1)
    refused = client.post(f"/memories/{policy.uid}/pin/", **HX)
    assert refused.status_code == 403 and not _fresh(policy).pinned
    # htmx sends the token from <body hx-headers> as a header.
    accepted = client.post(f"/memories/{policy.uid}/pin/", **HX, HTTP_X_CSRFTOKEN=token)
    assert accepted.status_code == 200 and _fresh(policy).pinned


def test_memory_text_is_escaped_in_the_fragment(client, users, org):
    hostile = writes.publish(org.acme, "xss", "<script>alert(1)</script>", principal=users.p_owner)
    response = _hx_post(client, users.owner, hostile, "pin")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in response.text
    assert "<script" not in response.text


# --- the memory page: republish and forget lead elsewhere ------------------------------


def test_htmx_republish_redirects_to_the_new_memory_with_the_flash(client, users, org, learned):
    response = _hx_post(
        client, users.owner, learned, "republish", {"target": "tenant:acme", "text": "CET"}
    )
    new = Memory.objects.get(scope=org.acme, key="tz")
    assert response.status_code == 200
    assert response["HX-Redirect"] == f"/memories/{new.uid}/"
    assert "Location" not in response
    assert new.promoted_from_id == learned.pk and new.author == "human"
    landing = client.get(response["HX-Redirect"]).text
    assert f"Republished at tenant:acme as {new.uid}." in landing


def test_htmx_republish_beyond_the_grant_is_refused_inside_the_fragment(client, users, learned):
    response = _hx_post(
        client, users.owner, learned, "republish", {"target": "global", "text": "works in CET"}
    )
    assert response.status_code == 200 and _is_memory_fragment(response)
    assert "HX-Redirect" not in response
    assert _notice(response).startswith("flash-error: Not allowed: you do not administer global.")
    assert not Memory.objects.filter(scope__token="global", key="tz").exists()
    assert refusals("promote", 403, "user:owner").filter(scope="global").exists()


def test_htmx_republish_to_a_scope_not_offered_shows_the_error(client, users, learned):
    response = _hx_post(client, users.owner, learned, "republish", {"target": "actor:acme/u2"})
    assert response.status_code == 200 and _is_memory_fragment(response)
    assert "choose one of the wider scopes offered" in _notice(response)
    assert Memory.objects.filter(key="tz").count() == 1


def test_htmx_forget_redirects_to_the_scope_page_with_the_flash(client, users, org, learned):
    second = writes.correct(learned, "works in CET, mornings", principal=users.p_owner)
    turns.resolve_turn(org.u1, "run-1", principal=org.acme_agent)
    response = _hx_post(client, users.owner, second, "forget", {"confirm_key": "tz"})
    assert response.status_code == 200
    assert response["HX-Redirect"] == "/scopes/actor:acme/u1/"
    assert not Memory.objects.filter(key="tz").exists()
    assert LedgerEvent.objects.filter(kind="memory.forgotten").exists()
    assert "Forgotten: 2 versions erased" in client.get(response["HX-Redirect"]).text


def test_htmx_forget_with_a_wrong_key_shows_the_error_and_deletes_nothing(client, users, learned):
    response = _hx_post(client, users.owner, learned, "forget", {"confirm_key": "t z"})
    assert response.status_code == 200 and _is_memory_fragment(response)
    assert "HX-Redirect" not in response
    assert "nothing was forgotten" in _notice(response)
    assert Memory.objects.filter(key="tz").exists()


def test_htmx_action_on_a_memory_forgotten_meanwhile_says_it_is_gone(client, users, learned):
    client.force_login(users.owner)
    client.post(f"/memories/{learned.uid}/forget/", {"confirm_key": "tz"})
    response = _hx_post(client, users.owner, learned, "pin")
    assert response.status_code == 200 and _is_memory_fragment(response)
    assert "nothing here, or nothing you may see" in _notice(response)
    assert 'href="/scopes/"' in response.text


# --- the memory page's markup -----------------------------------------------------------


def test_every_memory_form_posts_with_htmx_to_its_own_action(client, users, learned):
    client.force_login(users.owner)
    page = client.get(f"/memories/{learned.uid}/").text
    forms = re.findall(r"<form method=\"post\" action=\"(/memories/[^\"]+)\"([^>]*)>", page)
    assert {action.rsplit("/", 2)[-2] for action, _ in forms} == {
        "correct",
        "pin",
        "tags",
        "republish",
        "invalidate",
        "forget",
        "expiry",
    }
    for action, attributes in forms:
        assert f'hx-post="{action}"' in attributes
        assert 'hx-target="#memory-content"' in attributes


def test_htmx_get_of_the_memory_page_is_its_content(client, users, policy):
    client.force_login(users.owner)
    response = client.get(f"/memories/{policy.uid}/", **HX)
    assert response.status_code == 200 and _is_memory_fragment(response)
    assert "HX-Request" in response["Vary"]


# --- the conflicts page: a row is replaced by its result --------------------------------


@pytest.fixture
def tone(users, org):
    """An agent's narrower "brief" over a person's "formal" at tenant:acme."""
    brief = writes.remember(org.u1, "tone", "brief", principal=org.acme_agent).memory
    formal = writes.publish(org.acme, "tone", "formal", principal=users.p_owner)
    return brief, formal


def _row_post(client, user, memory, action, row_id, data):
    """A conflicts row's decision, posted to the row's own endpoint (row_id names both)."""
    client.force_login(user)
    narrow, wide = row_id.removeprefix("conflict-").split("-", 1)
    assert narrow == memory.uid
    return client.post(f"/conflicts/{narrow}/{wide}/{action}/", data, **HX)


def _row_id(brief, formal) -> str:
    return f"conflict-{brief.uid}-{formal.uid}"


def test_conflict_rows_carry_their_id_and_post_with_htmx_into_it(client, users, tone):
    brief, formal = tone
    client.force_login(users.owner)
    page = client.get("/conflicts/").text
    assert f'<tr id="{_row_id(brief, formal)}" class="attention">' in page
    for action in ("republish", "invalidate"):
        url = f"/conflicts/{brief.uid}/{formal.uid}/{action}/"
        assert f'hx-post="{url}" hx-target="closest tr"' in page


def test_htmx_invalidate_from_a_conflict_row_answers_a_result_row(client, users, tone):
    brief, formal = tone
    back = "/conflicts/?authors=agent%3Ehuman"
    response = _row_post(
        client,
        users.owner,
        brief,
        "invalidate",
        _row_id(brief, formal),
        {"reason": "the team writes formally", "next": back},
    )
    assert response.status_code == 200
    text = response.text.strip()
    assert text.startswith(f'<tr id="{_row_id(brief, formal)}" class="done done-success">')
    assert "<html" not in text and "<table" not in text
    assert _notice(response) == "flash-success: Invalidated: it no longer reaches any prompt."
    assert f'href="/memories/{brief.uid}/"' in text
    assert f'href="{back}"' in text
    fresh = _fresh(brief)
    assert (
        fresh.retired_reason == "invalidated" and fresh.retired_note == "the team writes formally"
    )
    # The result is in the row, not also waiting as a flash on the next page.
    assert "Invalidated" not in client.get("/conflicts/").text


def test_htmx_republish_from_a_conflict_row_links_the_new_memory(client, users, org, tone):
    brief, formal = tone
    response = _row_post(
        client,
        users.owner,
        brief,
        "republish",
        _row_id(brief, formal),
        {"target": "tenant:acme", "next": "/conflicts/"},
    )
    new = Memory.objects.get(scope=org.acme, key="tone", retired_at=None)
    assert response.status_code == 200
    assert "HX-Redirect" not in response
    assert response.text.strip().startswith(f'<tr id="{_row_id(brief, formal)}"')
    assert _notice(response) == f"flash-success: Republished at tenant:acme as {new.uid}."
    assert f'href="/memories/{new.uid}/"' in response.text
    assert new.text == "brief" and new.promoted_from_id == brief.pk
    assert _fresh(formal).retired_reason == "superseded"
    assert "Republished" not in client.get("/conflicts/").text


def test_htmx_refusal_from_a_conflict_row_is_a_result_row_and_logged(client, users, tone):
    brief, formal = tone
    response = _row_post(
        client, users.auditor, brief, "invalidate", _row_id(brief, formal), {"reason": "no"}
    )
    assert response.status_code == 200
    assert response.text.strip().startswith(
        f'<tr id="{_row_id(brief, formal)}" class="done done-error">'
    )
    assert "Not allowed: you do not administer actor:acme/u1" in _notice(response)
    assert _fresh(brief).retired_at is None
    assert refusals("invalidate", 403, "user:auditor").exists()


def test_htmx_invalid_reason_from_a_conflict_row_says_why(client, users, tone):
    brief, formal = tone
    response = _row_post(
        client, users.owner, brief, "invalidate", _row_id(brief, formal), {"reason": " "}
    )
    assert response.status_code == 200
    assert "say why the memory is invalid" in _notice(response)
    assert _fresh(brief).retired_at is None


def test_htmx_acting_on_a_stale_row_says_the_version_is_no_longer_live(client, users, tone):
    brief, formal = tone
    writes.correct(brief, "brief, but polite", principal=users.p_owner)
    response = _row_post(
        client, users.owner, brief, "invalidate", _row_id(brief, formal), {"reason": "x"}
    )
    assert response.status_code == 200
    assert "no longer live" in _notice(response)


def test_memory_actions_ignore_hx_target_and_answer_the_memory_fragment(client, users, tone):
    """No memory action reads another page's markup: whatever HX-Target says, the memory
    page's action answers the memory page's fragment."""
    brief, formal = tone
    client.force_login(users.owner)
    response = client.post(
        f"/memories/{brief.uid}/pin/", {}, **HX, HTTP_HX_TARGET=_row_id(brief, formal)
    )
    assert response.status_code == 200
    assert _is_memory_fragment(response)
    assert AccessLog.objects.filter(action="memory.read", memory_ids=[brief.uid]).exists()


@pytest.mark.parametrize("narrow, wide", [("mem_x", "mem_y"), ("..", "x")])
def test_a_conflict_row_endpoint_with_malformed_ids_is_404(client, users, tone, narrow, wide):
    client.force_login(users.owner)
    response = client.post(f"/conflicts/{narrow}/{wide}/invalidate/", {"reason": "x"})
    assert response.status_code == 404


def test_a_plain_post_to_a_conflict_row_endpoint_redirects_to_the_list(client, users, tone):
    brief, formal = tone
    client.force_login(users.owner)
    response = client.post(
        f"/conflicts/{brief.uid}/{formal.uid}/invalidate/",
        {"reason": "formal it is", "next": "/conflicts/?authors=agent%3Ehuman"},
    )
    assert response.status_code == 302
    assert response["Location"] == "/conflicts/?authors=agent%3Ehuman"
    assert _fresh(brief).retired_reason == "invalidated"


def test_a_plain_post_with_a_bad_value_to_a_conflict_row_is_422(client, users, tone):
    brief, formal = tone
    client.force_login(users.owner)
    response = client.post(f"/conflicts/{brief.uid}/{formal.uid}/invalidate/", {"reason": " "})
    assert response.status_code == 422 and "say why the memory is invalid" in response.text
    assert _fresh(brief).retired_at is None


def test_a_conflict_row_endpoint_is_post_only_and_needs_a_login(client, users, tone):
    brief, formal = tone
    url = f"/conflicts/{brief.uid}/{formal.uid}/invalidate/"
    assert client.post(url, {"reason": "x"})["Location"].startswith("/login/")
    client.force_login(users.owner)
    response = client.get(url)
    assert response.status_code == 303 and response["Location"] == "/conflicts/"
    assert _fresh(brief).retired_at is None
