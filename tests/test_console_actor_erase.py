"""The actor page's "Erase this person": typed confirmation, the report, the refusals."""

import pytest
from django.test import Client

from memory_core import actors, transcripts, turns, writes
from memory_core.accounts import keys
from memory_core.models import AccessLog, ApiKey, Digest, LedgerEvent, Memory, Message
from tests.helpers import login

HX = {"HTTP_HX_REQUEST": "true"}
ERASE = "/actors/acme/u1/erase/"
FACT = "u1 is allergic to quinine"


@pytest.fixture
def history(org, operator):
    agent = org.acme_agent
    transcripts.record_message(org.u1, "t-1", "user", "I am allergic to quinine", principal=agent)
    writes.remember(org.u1, "health", FACT, principal=agent, run_id="r-1", thread_id="t-1")
    turns.resolve_turn(org.u1, "r-2", principal=agent, query="what am I allergic to")
    keys.create_api_key("u1 desktop", org.acme, principal=operator, actor_ref="u1")


def _untouched(org):
    assert Memory.objects.filter(scope=org.u1.scope, text=FACT).exists()
    assert Message.objects.filter(thread__actor=org.u1).count() == 1
    assert Digest.objects.get(actor=org.u1, run_id="r-2").query == "what am I allergic to"
    assert ApiKey.objects.filter(actor=org.u1, revoked_at__isnull=True).count() == 1
    assert not LedgerEvent.objects.filter(kind="actor.erased").exists()


def test_an_administrator_sees_the_erase_section_with_what_it_leaves(client, users, org):
    page = login(client, users.owner).get("/actors/acme/u1/").text
    assert 'id="erase"' in page and 'action="/actors/acme/u1/erase/"' in page
    assert "What an erasure leaves" in page and "republished" in page
    assert 'name="confirm_ref"' in page


def test_an_auditor_sees_no_erase_section(client, users, org):
    page = login(client, users.auditor).get("/actors/acme/u1/").text
    assert 'id="erase"' not in page and "/erase/" not in page


def test_erase_with_a_wrong_ref_erases_nothing(client, users, org, history):
    response = login(client, users.owner).post(ERASE, {"confirm_ref": "acme/u2"})
    assert response.status_code == 422
    assert "nothing was erased" in response.text and 'id="erase"' in response.text
    _untouched(org)


def test_erase_with_the_typed_ref_erases_and_reports_the_counts(client, users, org, history):
    response = login(client, users.owner).post(ERASE, {"confirm_ref": " acme/u1 "})
    assert response.status_code == 302 and response["Location"] == "/actors/acme/u1/"
    assert not Memory.objects.filter(scope=org.u1.scope).exists()
    assert not Message.objects.filter(thread__actor=org.u1).exists()
    assert Digest.objects.get(actor=org.u1, run_id="r-2").query is None
    assert not ApiKey.objects.filter(actor=org.u1, revoked_at__isnull=True).exists()
    event = LedgerEvent.objects.get(kind="actor.erased")
    assert event.principal == "user:owner" and event.payload["memories"] == 1
    row = AccessLog.objects.get(action="actor.erase")
    assert (row.channel, row.outcome, row.actor_ref) == ("console", 200, "acme/u1")
    landing = client.get(response["Location"]).text
    assert "Erased acme/u1: 1 memory forgotten (1 version)" in landing
    assert "1 conversation with 1 message deleted; 1 bound API key revoked." in landing
    assert "quinine" not in landing


def test_htmx_erase_redirects_to_the_actor_page(client, users, org, history):
    response = login(client, users.owner).post(ERASE, {"confirm_ref": "acme/u1"}, **HX)
    assert response.status_code == 200 and response["HX-Redirect"] == "/actors/acme/u1/"
    assert LedgerEvent.objects.filter(kind="actor.erased").count() == 1


def test_htmx_erase_with_a_wrong_ref_answers_the_section_with_the_message(
    client, users, org, history
):
    response = login(client, users.owner).post(ERASE, {"confirm_ref": "u1"}, **HX)
    assert response.status_code == 200
    assert 'id="erase"' in response.text and "nothing was erased" in response.text
    assert "<html" not in response.text
    _untouched(org)


def test_an_auditor_erasing_is_403_and_logged(client, users, org, history):
    response = login(client, users.auditor).post(ERASE, {"confirm_ref": "acme/u1"})
    assert response.status_code == 403
    refused = AccessLog.objects.get(action="actor.erase")
    assert (refused.outcome, refused.principal) == (403, "user:auditor")
    _untouched(org)


def test_an_auditor_erasing_with_htmx_gets_the_refusal_inside_the_section(
    client, users, org, history
):
    response = login(client, users.auditor).post(ERASE, {"confirm_ref": "acme/u1"}, **HX)
    assert response.status_code == 200
    assert "Not allowed" in response.text and "recorded in the access log" in response.text
    _untouched(org)


def test_another_tenants_admin_erasing_is_404(client, users, org, history):
    response = login(client, users.outsider).post(ERASE, {"confirm_ref": "acme/u1"})
    assert response.status_code == 404
    _untouched(org)


def test_anonymous_erase_is_sent_to_login(client, org, history):
    response = client.post(ERASE, {"confirm_ref": "acme/u1"})
    assert response.status_code == 302 and response["Location"].startswith("/login/")
    _untouched(org)


def test_erase_without_csrf_token_is_refused(users, org, history):
    client = Client(enforce_csrf_checks=True)
    client.force_login(users.owner)
    assert client.post(ERASE, {"confirm_ref": "acme/u1"}).status_code == 403
    _untouched(org)


def test_a_get_of_the_erase_address_is_the_page_of_the_actor_named_erase(
    client, users, org, operator
):
    """`/actors/acme/erase/` is also the page of actor `acme/erase`: a GET goes there."""
    actors.put_actor("erase", "Erin", ["tenant:acme"], org.acme_key, org.acme_agent)
    login(client, users.owner)
    page = client.get("/actors/acme/erase/")
    assert page.status_code == 200 and "Erin" in page.text
    assert client.get(ERASE).status_code == 404  # no actor `acme/u1/erase`
    assert not LedgerEvent.objects.filter(kind="actor.erased").exists()
