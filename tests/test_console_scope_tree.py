"""The scopes page's lazy tree: `global`'s children closed, a closed scope opened
by a plain link (`?open=`, no JavaScript) or by htmx (the same address answering only its
rows), search by name, and the kept live counts beside each scope."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from memory_console.console.scopes import reads as scopes_view
from memory_core import writes
from memory_core.models import Memory
from tests.helpers import login


def _tokens(html: str) -> set[str]:
    return set(re.findall(r'class="chip chip-[^"]*" href="/scopes/([^"]+)/"', html))


def _row(html: str, token: str) -> str:
    """The table row of `token`'s chip."""
    for row in re.findall(r"<tr id=\"scope-row-\d+\">.*?</tr>", html, re.S):
        if f'href="/scopes/{token}/"' in row:
            return row
    raise AssertionError(f"no row for {token}")


def _counts(row: str) -> list[int]:
    return [int(n) for n in re.findall(r'<td class="num">(\d+)</td>', row)]


@pytest.fixture
def memories(org, operator):
    writes.publish(org.acme, "tone", "calm", principal=operator, pinned=True)
    writes.publish(org.ops, "units", "metric", principal=operator)
    writes.remember(org.u1, "tone", "cheerful", principal=operator)
    writes.remember(org.u1, "units", "imperial", principal=operator)
    gone = writes.publish(org.acme, "fiscal-year", "april", principal=operator)
    Memory.objects.filter(pk=gone.pk).update(expires_at=timezone.now() - timedelta(hours=1))


def test_superuser_gets_tenants_closed_with_a_link_and_an_htmx_address(client, users, org):
    html = login(client, users.su).get("/scopes/").text
    assert {"global", "tenant:acme", "tenant:globex"} <= _tokens(html)
    assert not _tokens(html) & {"team:acme/ops", "actor:acme/u1", "actor:globex/x9"}
    row = _row(html, "tenant:acme")
    assert 'href="/scopes/?open=tenant%3Aacme' in row  # works without JavaScript
    assert 'hx-get="/scopes/?open=tenant%3Aacme"' in row
    assert 'aria-expanded="false"' in row


def test_a_plain_link_opens_one_tenant_and_leaves_the_others_closed(client, users, org):
    response = login(client, users.su).get("/scopes/?open=tenant:acme")
    assert response.status_code == 200
    listed = _tokens(response.text)
    assert {"tenant:acme", "team:acme/ops", "actor:acme/u1", "actor:acme/u2"} <= listed
    assert "tenant:globex" in listed and "actor:globex/x9" not in listed
    assert "<html" in response.text


def test_opening_a_deeper_scope_opens_the_tenant_it_hangs_under(client, users, org):
    listed = _tokens(login(client, users.su).get("/scopes/?open=team:acme/ops").text)
    assert {"tenant:acme", "team:acme/ops", "actor:acme/u1"} <= listed


def test_htmx_gets_only_the_opened_rows(client, users, org):
    login(client, users.su)
    response = client.get("/scopes/?open=tenant:acme", HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert "<html" not in response.text and "<table" not in response.text
    assert _tokens(response.text) == {
        "tenant:acme",
        "team:acme/ops",
        "actor:acme/u1",
        "actor:acme/u2",
    }
    assert 'aria-expanded="true"' in _row(response.text, "tenant:acme")
    assert "HX-Request" in response["Vary"]


def test_a_tenant_admin_sees_their_tenant_open(client, users, org):
    html = login(client, users.owner).get("/scopes/").text
    assert _tokens(html) == {"tenant:acme", "team:acme/ops", "actor:acme/u1", "actor:acme/u2"}
    assert "?open=" not in html


@pytest.mark.parametrize("token", ["tenant:globex", "global", "tenant:nope", "actor:globex/x9"])
def test_opening_a_scope_the_user_does_not_read_is_not_found(client, users, org, token):
    login(client, users.owner)
    for headers in ({}, {"HTTP_HX_REQUEST": "true"}):
        response = client.get(f"/scopes/?open={token}", **headers)
        assert response.status_code == 404
        assert "globex" not in response.text


def test_anonymous_opening_is_sent_to_login(client, users, org):
    response = client.get("/scopes/?open=tenant:acme", HTTP_HX_REQUEST="true")
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_counts_are_live_memories_from_the_kept_table(client, users, org, memories):
    html = login(client, users.su).get("/scopes/?open=tenant:acme").text
    # The expired fiscal-year is held but not live: it is not counted.
    assert _counts(_row(html, "tenant:acme")) == [1, 0, 1]
    assert _counts(_row(html, "team:acme/ops")) == [1, 0, 0]
    assert _counts(_row(html, "actor:acme/u1")) == [2, 2, 0]
    assert _counts(_row(html, "actor:acme/u2")) == [0, 0, 0]


def test_search_finds_scopes_by_token_label_ref_and_name_within_reach(client, users, org):
    login(client, users.su)
    assert _tokens(client.get("/scopes/?q=ops").text) == {"team:acme/ops"}
    assert _tokens(client.get("/scopes/?q=User One").text) == {"actor:acme/u1"}
    assert _tokens(client.get("/scopes/?q=x9").text) == {"actor:globex/x9"}
    login(client, users.owner)
    response = client.get("/scopes/?q=x9")
    assert response.status_code == 200 and _tokens(response.text) == set()
    assert "0 scopes match" in response.text
    assert _tokens(client.get("/scopes/?q=acme").text) == {
        "tenant:acme",
        "team:acme/ops",
        "actor:acme/u1",
        "actor:acme/u2",
    }


def test_search_escapes_what_was_typed(client, users, org):
    html = login(client, users.su).get("/scopes/?q=<script>x</script>").text
    assert "<script>x</script>" not in html and "&lt;script&gt;x&lt;/script&gt;" in html


def test_a_large_subtree_is_cut_with_a_way_to_search(client, users, org, monkeypatch):
    monkeypatch.setattr(scopes_view, "SUBTREE_ROWS", 1)
    html = login(client, users.owner).get("/scopes/").text
    assert len(_tokens(html) - {"tenant:acme"}) == 1
    assert "2 more scopes under tenant:acme" in html
    assert 'href="/scopes/?q=tenant%3Aacme"' in html


def test_the_page_needs_no_count_per_scope(client, users, org, memories):
    """The counts of every shown row come from one read of the kept table."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    login(client, users.su)
    client.get("/scopes/")
    with CaptureQueriesContext(connection) as queries:
        client.get("/scopes/?open=tenant:acme")
    grouped = [q["sql"] for q in queries if "GROUP BY" in q["sql"]]
    assert len(grouped) == 1 and "memory_core_scopecount" in grouped[0]


def test_grants_at_several_tenants_show_each_tenant_closed(client, users, org):
    from memory_core.accounts.grants import grant
    from memory_core.accounts.principals import Principal

    grant("owner", org.globex, "auditor", principal=Principal.system("cli:test"))
    login(client, users.owner)
    html = client.get("/scopes/").text
    assert _tokens(html) == {"tenant:acme", "tenant:globex"}
    assert 'hx-get="/scopes/?open=tenant%3Aglobex"' in html
    assert "actor:globex/x9" in _tokens(client.get("/scopes/?open=tenant:globex").text)
