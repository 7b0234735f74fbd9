"""The scope tree, the scope page (filters, paging, htmx fragment) and publishing there."""

import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from memory_core import actors, writes
from memory_core.accounts.principals import Principal
from memory_core.actors import ensure_scope
from memory_core.models import AccessLog, LedgerEvent, Memory
from tests.helpers import login, refusals


def _tokens_listed(response) -> set[str]:
    return set(re.findall(r'class="chip chip-[^"]*" href="/scopes/([^"]+)/"', response.text))


# --- who gets in -----------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/scopes/", "/scopes/tenant:acme/", "/scopes/no-such-scope:x/"])
def test_anonymous_is_sent_to_login(client, users, path):
    response = client.get(path)
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


def test_anonymous_publish_is_sent_to_login_and_writes_nothing(client, users, org):
    response = client.post("/scopes/tenant:acme/publish/", {"key": "k", "text": "t"})
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")
    assert not Memory.objects.filter(key="k").exists()


def test_login_page_and_logging_in_and_out(client, users):
    assert client.get("/login/").status_code == 200
    response = client.post("/login/", {"username": "owner", "password": "pw-owner-123"})
    assert response.status_code == 302
    assert client.get("/scopes/").status_code == 200
    response = client.get("/logout/")  # logging out is a POST; a GET is sent home
    assert response.status_code == 303 and response["Location"] == "/"
    assert client.get("/scopes/").status_code == 200
    response = client.post("/logout/")
    assert response.status_code == 302 and response["Location"] == "/login/"
    assert client.get("/scopes/").status_code == 302


# --- the tree --------------------------------------------------------------------------


def test_superuser_sees_every_tenant_closed_and_opens_each(client, users, org):
    # The tree is lazy: global's children are listed, each closed; opening one
    # shows its subtree (tests/test_console_scope_tree.py has the rest).
    login(client, users.su)
    listed = _tokens_listed(client.get("/scopes/"))
    assert {"global", "tenant:acme", "tenant:globex"} <= listed
    assert not listed & {"team:acme/ops", "actor:globex/x9"}
    assert {"team:acme/ops", "actor:acme/u1"} <= _tokens_listed(
        client.get("/scopes/?open=tenant:acme")
    )
    assert "actor:globex/x9" in _tokens_listed(client.get("/scopes/?open=tenant:globex"))


def test_owner_sees_their_tenant_and_nothing_above_or_beside_it(client, users, org):
    listed = _tokens_listed(login(client, users.owner).get("/scopes/"))
    assert listed == {"tenant:acme", "team:acme/ops", "actor:acme/u1", "actor:acme/u2"}


def test_auditor_sees_the_same_tree_as_the_owner(client, users, org):
    listed = _tokens_listed(login(client, users.auditor).get("/scopes/"))
    assert listed == {"tenant:acme", "team:acme/ops", "actor:acme/u1", "actor:acme/u2"}


def test_outsider_sees_only_their_own_tenant(client, users, org):
    listed = _tokens_listed(login(client, users.outsider).get("/scopes/"))
    assert listed == {"tenant:globex", "actor:globex/x9"}


def test_user_without_grants_sees_an_empty_state(client, users, django_user_model):
    nobody = django_user_model.objects.create_user("nobody", password="pw-nobody-123")
    response = login(client, nobody).get("/scopes/")
    assert response.status_code == 200
    assert "No scopes to show" in response.text


def test_tree_shows_live_memory_counts(client, users, org):
    writes.publish(org.acme, "a", "one", principal=users.p_owner, pinned=True)
    writes.publish(org.acme, "b", "two", principal=users.p_owner)
    writes.publish(org.acme, "b", "two, corrected", principal=users.p_owner)  # one live
    writes.remember(org.u1, "c", "agent note", principal=org.acme_agent)
    response = login(client, users.owner).get("/scopes/")
    row = re.search(r'href="/scopes/tenant:acme/".*?</tr>', response.text, re.S).group(0)
    assert re.findall(r'<td class="num">(\d+)</td>', row) == ["2", "0", "1"]
    row = re.search(r'href="/scopes/actor:acme/u1/".*?</tr>', response.text, re.S).group(0)
    assert re.findall(r'<td class="num">(\d+)</td>', row) == ["1", "1", "0"]


def test_tree_counts_take_the_same_number_of_queries_for_more_scopes(client, users, org, operator):
    login(client, users.owner)
    client.get("/scopes/")  # warm the session
    with CaptureQueriesContext(connection) as few:
        client.get("/scopes/")
    for i in range(12):
        scope, _ = actors.ensure_scope(f"team:acme/t{i}", org.acme, principal=operator)
        writes.publish(scope, "k", f"fact {i}", principal=operator)
    with CaptureQueriesContext(connection) as many:
        response = client.get("/scopes/")
    assert "team:acme/t11" in response.text
    assert len(many.captured_queries) == len(few.captured_queries)


# --- one scope -------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["su", "owner", "auditor"])
def test_readers_open_the_scope_page(client, users, org, who):
    writes.publish(org.acme, "k", "visible fact", principal=users.p_owner)
    response = login(client, getattr(users, who)).get("/scopes/tenant:acme/")
    assert response.status_code == 200
    assert "visible fact" in response.text


@pytest.mark.parametrize("token", ["tenant:acme", "team:acme/ops", "actor:acme/u1", "global"])
def test_outsider_gets_404_on_scopes_outside_their_grant(client, users, org, token):
    response = login(client, users.outsider).get(f"/scopes/{token}/")
    assert response.status_code == 404
    assert token not in response.text


def test_unknown_scope_is_404(client, users):
    assert login(client, users.su).get("/scopes/tenant:nowhere/").status_code == 404


def test_reading_a_scope_page_writes_an_access_log_row(client, users, org):
    memory = writes.publish(org.acme, "k", "fact", principal=users.p_owner)
    login(client, users.auditor).get("/scopes/tenant:acme/")
    row = AccessLog.objects.get(action="scope.read")
    assert row.channel == "console"
    assert row.principal == "user:auditor"
    assert row.scope == "tenant:acme"
    assert row.outcome == 200
    assert row.memory_ids == [memory.uid]


def test_scope_page_lists_only_live_memories_of_that_scope(client, users, org):
    writes.publish(org.acme, "old", "superseded text", principal=users.p_owner)
    writes.publish(org.acme, "old", "current text", principal=users.p_owner)
    writes.publish(org.ops, "ops-only", "held at team ops", principal=users.p_owner)
    response = login(client, users.owner).get("/scopes/tenant:acme/")
    assert "current text" in response.text
    assert "superseded text" not in response.text
    assert "held at team ops" not in response.text


@pytest.fixture
def varied(users, org):
    writes.publish(org.u1.scope, "by-person", "a person wrote this", principal=users.p_owner)
    writes.publish(org.u1.scope, "pinned-one", "pinned fact", principal=users.p_owner, pinned=True)
    writes.publish(
        org.u1.scope, "tagged", "about invoices", principal=users.p_owner, tags=["finance"]
    )
    writes.remember(org.u1, "by-agent", "an agent concluded this", principal=org.acme_agent)


@pytest.mark.parametrize(
    "query, shown",
    [
        ("author=agent", {"by-agent"}),
        ("author=human", {"by-person", "pinned-one", "tagged"}),
        ("pinned=yes", {"pinned-one"}),
        ("pinned=no", {"by-person", "tagged", "by-agent"}),
        ("tag=finance", {"tagged"}),
        ("q=invoices", {"tagged"}),
        ("q=concluded", {"by-agent"}),
        ("q=pinned-one", {"pinned-one"}),
        ("author=human&pinned=no&q=person", {"by-person"}),
        ("author=bogus", {"by-person", "pinned-one", "tagged", "by-agent"}),
    ],
)
def test_scope_page_filters_as_a_plain_get(client, users, org, varied, query, shown):
    response = login(client, users.owner).get(f"/scopes/actor:acme/u1/?{query}")
    assert response.status_code == 200
    keys = set(re.findall(r'<td class="key"><a href="/memories/[^/]+/">([^<]+)</a>', response.text))
    assert keys == shown


def test_htmx_filter_request_gets_only_the_rows_fragment(client, users, org, varied):
    login(client, users.owner)
    fragment = client.get("/scopes/actor:acme/u1/?author=agent", headers={"HX-Request": "true"})
    assert fragment.status_code == 200
    assert fragment.text.lstrip().startswith('<section id="memory-rows"')
    assert "<html" not in fragment.text
    assert "an agent concluded this" in fragment.text
    assert "a person wrote this" not in fragment.text
    assert "HX-Request" in fragment["Vary"]
    page = client.get("/scopes/actor:acme/u1/?author=agent")
    assert "<html" in page.text and 'id="memory-rows"' in page.text


def test_htmx_history_restore_gets_the_whole_page(client, users, org):
    login(client, users.owner)
    response = client.get(
        "/scopes/tenant:acme/",
        headers={"HX-Request": "true", "HX-History-Restore-Request": "true"},
    )
    assert "<html" in response.text


def test_scope_page_is_paged_with_real_links(client, users, org, operator):
    for i in range(60):
        writes.publish(org.ops, f"k{i:02d}", f"fact number {i}", principal=operator)
    login(client, users.owner)
    first = client.get("/scopes/team:acme/ops/?author=human")
    assert first.text.count('<td class="key">') == 50
    assert "page 1 of 2" in first.text
    # Page links keep the filters, and work with and without htmx.
    assert 'href="/scopes/team:acme/ops/?author=human&amp;page=2"' in first.text
    assert 'hx-get="/scopes/team:acme/ops/?author=human&amp;page=2"' in first.text
    second = client.get("/scopes/team:acme/ops/?author=human&page=2")
    assert second.text.count('<td class="key">') == 10
    read = AccessLog.objects.filter(action="scope.read").order_by("-id").first()
    assert read.count == 10 and len(read.memory_ids) == 10


# --- publish ---------------------------------------------------------------------------


def test_publish_form_is_shown_to_admins_only(client, users, org):
    assert "Publish a memory here" in login(client, users.owner).get("/scopes/team:acme/ops/").text
    assert "Publish a memory here" in login(client, users.su).get("/scopes/team:acme/ops/").text
    assert (
        "Publish a memory here"
        not in login(client, users.auditor).get("/scopes/team:acme/ops/").text
    )


@pytest.mark.parametrize("who", ["owner", "su"])
def test_admin_publishes_a_memory_with_a_ledger_event(client, users, org, who):
    response = login(client, getattr(users, who)).post(
        "/scopes/team:acme/ops/publish/",
        {"key": "on-call", "text": "page the ops rota", "tags": "ops, rota", "pinned": "on"},
    )
    assert response.status_code == 302
    assert response["Location"] == "/scopes/team:acme/ops/"
    memory = Memory.objects.get(scope=org.ops, key="on-call")
    assert memory.author == "human"
    assert memory.origin_user == getattr(users, who).username
    assert memory.pinned and memory.tags == ["ops", "rota"]
    assert LedgerEvent.objects.filter(kind="memory.published", payload__memory=memory.uid).exists()
    follow = client.get("/scopes/team:acme/ops/")
    assert f"Published {memory.uid} at team:acme/ops." in follow.text


def test_auditor_publish_is_403_writes_nothing_and_is_logged(client, users, org):
    response = login(client, users.auditor).post(
        "/scopes/tenant:acme/publish/", {"key": "k", "text": "should not land"}
    )
    assert response.status_code == 403
    assert "Not allowed" in response.text
    assert not Memory.objects.filter(key="k").exists()
    assert not LedgerEvent.objects.filter(kind="memory.published").exists()
    assert refusals("publish", 403, "user:auditor").filter(scope="tenant:acme").exists()


def test_outsider_publish_is_404_and_writes_nothing(client, users, org):
    response = login(client, users.outsider).post(
        "/scopes/tenant:acme/publish/", {"key": "k", "text": "should not land"}
    )
    assert response.status_code == 404
    assert not Memory.objects.filter(key="k").exists()


def test_invalid_publish_rerenders_the_form_with_the_message_and_writes_nothing(client, users, org):
    response = login(client, users.owner).post(
        "/scopes/tenant:acme/publish/", {"key": "Bad Key", "text": "a fact"}
    )
    assert response.status_code == 422
    assert "key must start with a lowercase letter" in response.text
    assert 'value="a fact"' in response.text  # what was typed is kept
    assert not Memory.objects.filter(text="a fact").exists()


def test_a_get_of_publish_is_sent_to_the_scope_page(client, users, org):
    # A reload after a refused publish (the address bar holds the publish address).
    before = Memory.objects.count()
    response = login(client, users.owner).get("/scopes/tenant:acme/publish/")
    assert response.status_code == 303 and response["Location"] == "/scopes/tenant:acme/"
    assert client.get(response["Location"]).status_code == 200
    assert Memory.objects.count() == before


def test_a_get_of_publish_is_the_page_of_a_scope_named_publish(client, users, org):
    # `team:acme/publish` is a fine team name: its page shares the publish address.
    before = Memory.objects.count()
    login(client, users.owner)
    ensure_scope("team:acme/publish", org.acme, principal=Principal.system("cli:test"))
    page = client.get("/scopes/team:acme/publish/")
    assert page.status_code == 200 and "team:acme/publish" in page.text
    assert Memory.objects.count() == before


def test_publish_without_csrf_token_is_refused(users, org):
    client = Client(enforce_csrf_checks=True)
    client.force_login(users.owner)
    response = client.post("/scopes/tenant:acme/publish/", {"key": "k", "text": "t"})
    assert response.status_code == 403
    assert not Memory.objects.filter(key="k").exists()


def test_publish_with_the_page_csrf_token_is_accepted(users, org):
    client = Client(enforce_csrf_checks=True)
    client.force_login(users.owner)
    page = client.get("/scopes/tenant:acme/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    response = client.post(
        "/scopes/tenant:acme/publish/", {"key": "k", "text": "t", "csrfmiddlewaretoken": token}
    )
    assert response.status_code == 302
    assert Memory.objects.filter(key="k", scope=org.acme).exists()


def test_htmx_csrf_header_is_on_the_body(client, users, org):
    page = login(client, users.owner).get("/scopes/")
    assert re.search(r"<body hx-headers='\{\"X-CSRFToken\": \"[A-Za-z0-9]+\"\}'>", page.text)


def test_scope_search_ranks_by_meaning_as_agents_search(client, users, org):
    writes.publish(org.acme, "manager", "reports to Dana Whitfield", principal=users.p_owner)
    writes.publish(org.acme, "pet", "owns a golden retriever", principal=users.p_owner)
    response = login(client, users.owner).get("/scopes/tenant:acme/?q=who+is+their+boss")
    keys = re.findall(r'<td class="key"><a href="/memories/[^/]+/">([^<]+)</a>', response.text)
    assert keys == ["manager"]


def test_a_get_of_publish_before_logging_in_comes_back_after_it(client, users, org):
    response = client.get("/scopes/tenant:acme/publish/")
    assert response.status_code == 302
    assert response["Location"] == "/login/?next=/scopes/tenant%3Aacme/publish/"
