"""The ledger page: who sees which events, filters, id-cursor paging while events arrive,
the live poll, the chain check, and the indexes behind its queries."""

import re
from datetime import timedelta

import pgtrigger
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memory_console.console.ledger.verification import VERIFICATION_KEY
from memory_core import writes
from memory_core.accounts.grants import grant
from memory_core.accounts.principals import Principal
from memory_core.models import LedgerEvent
from tests.helpers import explain, login, main_query
from tests.roles import as_owner

ACME_TOKENS = {"tenant:acme", "team:acme/ops", "actor:acme/u1", "actor:acme/u2"}
GLOBEX_TOKENS = {"tenant:globex", "actor:globex/x9"}


def _ids(response) -> list[int]:
    return [int(i) for i in re.findall(r'<tr id="event-(\d+)"', response.text)]


def _ids_at(tokens) -> set[int]:
    return set(LedgerEvent.objects.filter(scope__in=tokens).values_list("id", flat=True))


@pytest.fixture
def events(users, org):
    """Writes in both tenants on top of what the org fixture recorded."""
    writes.publish(org.acme, "fiscal-year", "starts in October", principal=users.p_owner)
    writes.publish(org.ops, "oncall", "rotates on Mondays", principal=users.p_owner)
    writes.remember(org.u1, "tz", "works in CET", principal=org.acme_agent)
    writes.publish(org.globex, "secret-plan", "globex only", principal=users.p_outsider)
    writes.remember(org.x9, "tz", "works in PST", principal=org.globex_agent)


# --- who gets in, and what they see ----------------------------------------------------


@pytest.mark.parametrize(
    "request_",
    [("get", "/ledger/"), ("get", "/ledger/new/?after=0"), ("post", "/ledger/verify/")],
)
def test_anonymous_is_sent_to_login(client, users, request_):
    method, path = request_
    response = getattr(client, method)(path)
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


def test_superuser_sees_every_event(client, users, events):
    response = login(client, users.su).get("/ledger/")
    assert response.status_code == 200
    assert set(_ids(response)) == set(LedgerEvent.objects.values_list("id", flat=True))


@pytest.mark.parametrize("who", ["owner", "auditor"])
def test_acme_readers_see_acme_events_and_none_of_globex(client, users, events, who):
    response = login(client, getattr(users, who)).get("/ledger/")
    assert response.status_code == 200
    shown = set(_ids(response))
    assert shown == _ids_at(ACME_TOKENS)
    assert not shown & _ids_at(GLOBEX_TOKENS | {"global"})
    assert "globex only" not in response.text and "tenant:globex" not in response.text
    assert "user:outsider" not in response.text


def test_outsider_sees_only_globex_events(client, users, events):
    response = login(client, users.outsider).get("/ledger/")
    assert set(_ids(response)) == _ids_at(GLOBEX_TOKENS)
    assert "tenant:acme" not in response.text


def test_user_without_grants_sees_an_empty_ledger(client, users, events, django_user_model):
    nobody = django_user_model.objects.create_user("nobody", password="pw-nobody-123")
    response = login(client, nobody).get("/ledger/")
    assert response.status_code == 200
    assert _ids(response) == []
    assert "No events you may read yet" in response.text


def test_a_scope_filter_outside_the_grant_shows_nothing(client, users, events):
    response = login(client, users.auditor).get("/ledger/?scope=tenant:globex")
    assert response.status_code == 200
    assert _ids(response) == []


# --- filters ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query, expected",
    [
        ("kind=memory.remembered", {"kind": "memory.remembered"}),
        ("scope=team:acme/ops", {"scope": "team:acme/ops"}),
        ("principal=user:owner", {"principal": "user:owner"}),
        (
            "kind=memory.published&scope=tenant:acme",
            {"kind": "memory.published", "scope": "tenant:acme"},
        ),
    ],
)
def test_filters_narrow_the_list(client, users, events, query, expected):
    response = login(client, users.su).get(f"/ledger/?{query}")
    wanted = set(LedgerEvent.objects.filter(**expected).values_list("id", flat=True))
    assert wanted and set(_ids(response)) == wanted


def test_time_filters_narrow_the_list(client, users, events):
    login(client, users.su)
    everything = set(LedgerEvent.objects.values_list("id", flat=True))
    later = (timezone.now() + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M")
    earlier = (timezone.now() - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M")
    assert set(_ids(client.get("/ledger/?window=1h"))) == everything
    assert set(_ids(client.get(f"/ledger/?since={earlier}&until={later}"))) == everything
    assert _ids(client.get(f"/ledger/?since={later}")) == []
    assert _ids(client.get(f"/ledger/?until={earlier}")) == []
    # A malformed bound is ignored, like every console filter.
    assert set(_ids(client.get("/ledger/?since=yesterday-ish"))) == everything


def test_htmx_filter_request_gets_only_the_rows_fragment(client, users, events):
    fragment = login(client, users.owner).get(
        "/ledger/?kind=memory.remembered", headers={"HX-Request": "true"}
    )
    assert fragment.text.lstrip().startswith('<section id="ledger-rows"')
    assert "<html" not in fragment.text
    assert set(_ids(fragment)) == set(
        LedgerEvent.objects.filter(kind="memory.remembered", scope__in=ACME_TOKENS).values_list(
            "id", flat=True
        )
    )
    assert "HX-Request" in fragment["Vary"]


# --- paging by id cursor -----------------------------------------------------------------


def _publish_many(org, principal, count, prefix="k"):
    for i in range(count):
        writes.publish(org.acme, f"{prefix}{i}", f"fact {i}", principal=principal)


def test_cursor_paging_has_no_duplicates_or_gaps_while_events_arrive(client, users, org):
    _publish_many(org, users.p_owner, 60)
    originals = list(
        LedgerEvent.objects.filter(kind="memory.published")
        .order_by("-id")
        .values_list("id", flat=True)
    )
    login(client, users.auditor)
    first = client.get("/ledger/?kind=memory.published")
    first_ids = _ids(first)
    assert first_ids == originals[:50]
    older = re.search(r'href="(/ledger/\?[^"]*before=(\d+)[^"]*)"', first.text)
    assert older and int(older.group(2)) == first_ids[-1]
    assert "kind=memory.published" in older.group(1)

    _publish_many(org, users.p_owner, 5, prefix="late")  # arrive between the two requests

    second = client.get(older.group(1).replace("&amp;", "&"))
    second_ids = _ids(second)
    assert second_ids == originals[50:]
    assert first_ids + second_ids == originals  # every original once, in order
    assert "older ›" not in second.text
    # "newer" from the second page returns exactly the 50 rows above it.
    newer = client.get(f"/ledger/?kind=memory.published&after={second_ids[0]}")
    assert _ids(newer) == originals[:50]
    assert "‹ newer" in newer.text  # the five late events are newer still


def test_paging_never_uses_offset(client, users, org):
    _publish_many(org, users.p_owner, 55)
    login(client, users.owner)
    with CaptureQueriesContext(connection) as queries:
        page = client.get("/ledger/")
        client.get(f"/ledger/?before={_ids(page)[-1]}")
    ledger_sql = [q["sql"] for q in queries if "memory_core_ledgerevent" in q["sql"]]
    assert ledger_sql and not any("OFFSET" in sql.upper() for sql in ledger_sql)


def test_older_pages_do_not_poll(client, users, org):
    _publish_many(org, users.p_owner, 55)
    login(client, users.owner)
    head = client.get("/ledger/")
    assert 'id="ledger-poller"' in head.text and "data-live-poll" in head.text
    older = client.get(f"/ledger/?before={_ids(head)[-1]}")
    assert 'id="ledger-poller"' not in older.text
    assert "newest page" in older.text


# --- the live view -----------------------------------------------------------------------


def test_the_page_polls_every_few_seconds_from_its_newest_event(client, users, events):
    response = login(client, users.owner).get("/ledger/?kind=memory.published")
    top = _ids(response)[0]
    poller = re.search(r'<div id="ledger-poller"[^>]*>', response.text).group(0)
    assert re.search(r'hx-trigger="every \d+s, live:resume"', poller)
    assert f"after={top}" in poller and "kind=memory.published" in poller
    # The page runs no inline script: the live view's gating is a static file.
    assert re.search(r"<script(?![^>]*\bsrc=)", response.text) is None
    assert "/static/js/live-poll.js" in response.text


def test_poll_returns_only_events_newer_than_the_cursor(client, users, org, events):
    login(client, users.auditor)
    top = _ids(client.get("/ledger/"))[0]
    assert client.get(f"/ledger/new/?after={top}").status_code == 204

    one = writes.publish(org.acme, "late-a", "first late fact", principal=users.p_owner)
    writes.publish(org.globex, "late-x", "globex late fact", principal=users.p_outsider)
    two = writes.publish(org.ops, "late-b", "second late fact", principal=users.p_owner)
    poll = client.get(f"/ledger/new/?after={top}")
    assert poll.status_code == 200
    new_ids = _ids(poll)
    expected = list(
        LedgerEvent.objects.filter(id__gt=top, scope__in=ACME_TOKENS)
        .order_by("-id")
        .values_list("id", flat=True)
    )
    assert new_ids == expected and len(new_ids) == 2  # newest first, no globex event
    assert {one.uid, two.uid} <= set(re.findall(r"/memories/([^/]+)/", poll.text))
    assert all(i > top for i in new_ids)
    assert 'class="fresh"' in poll.text
    # The poller comes back out of band with its cursor on the newest event sent.
    oob = re.search(r'<template><div id="ledger-poller"[^>]*hx-swap-oob="true"', poll.text)
    assert oob and f"after={new_ids[0]}" in oob.group(0)
    assert client.get(f"/ledger/new/?after={new_ids[0]}").status_code == 204


def test_poll_keeps_the_page_filters(client, users, org, events):
    login(client, users.owner)
    top = LedgerEvent.objects.order_by("-id").first().id
    writes.remember(org.u1, "late", "an agent's late note", principal=org.acme_agent)
    writes.publish(org.acme, "late", "a person's late fact", principal=users.p_owner)
    poll = client.get(f"/ledger/new/?after={top}&kind=memory.remembered")
    kinds = set(LedgerEvent.objects.filter(id__in=_ids(poll)).values_list("kind", flat=True))
    assert kinds == {"memory.remembered"}


def test_poll_without_a_cursor_is_refused(client, users):
    assert login(client, users.owner).get("/ledger/new/").status_code == 422


# --- verifying the chain -------------------------------------------------------------------


def _tamper(event_id):
    # As the owner: the server's role may not UPDATE the ledger at all.
    with as_owner(), pgtrigger.ignore("memory_core.LedgerEvent:ledger_append_only"):
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE memory_core_ledgerevent SET principal = 'mallory' WHERE id = %s",
                [event_id],
            )


def test_verify_reports_ok_with_the_count_of_the_readers_streams(client, users, events):
    response = login(client, users.auditor).post("/ledger/verify/", headers={"HX-Request": "true"})
    acme_stream = LedgerEvent.objects.filter(stream="tenant:acme").count()
    assert response.status_code == 200
    assert f"ok: {acme_stream} events" in response.text
    assert "tenant:acme" in response.text and "tenant:globex" not in response.text
    response = login(client, users.su).post("/ledger/verify/", headers={"HX-Request": "true"})
    assert f"ok: {LedgerEvent.objects.count()} events" in response.text


def test_a_get_of_verify_is_sent_to_the_ledger(client, users):
    response = login(client, users.auditor).get("/ledger/verify/")
    assert response.status_code == 303 and response["Location"] == "/ledger/"


def test_verify_without_htmx_redirects_with_the_verdict(client, users, events):
    login(client, users.owner)
    response = client.post("/ledger/verify/", {"next": "/ledger/?kind=memory.published"})
    assert response.status_code == 302
    assert response["Location"] == "/ledger/?kind=memory.published"
    page = client.get(response["Location"])
    count = LedgerEvent.objects.filter(stream="tenant:acme").count()
    assert f"ok: {count} events" in page.text
    # An outside `next` is not followed.
    response = client.post("/ledger/verify/", {"next": "https://evil.example/"})
    assert response["Location"] == "/ledger/"


def test_verify_names_the_first_tampered_event(client, users, events):
    target = LedgerEvent.objects.get(kind="memory.published", scope="team:acme/ops")
    _tamper(target.id)
    for who in (users.auditor, users.su):
        response = login(client, who).post("/ledger/verify/", headers={"HX-Request": "true"})
        assert "verdict-broken" in response.text
        assert f"broken: event {target.id} (stream tenant:acme, seq {target.seq}" in response.text
        assert "hash does not match" in response.text
        assert f'href="/ledger/?before={target.id + 1}"' in response.text
    # Globex's chain is its own: its admin's check still holds.
    response = login(client, users.outsider).post("/ledger/verify/", headers={"HX-Request": "true"})
    assert "verdict-ok" in response.text
    assert str(target.id) not in response.text


def test_a_broken_event_outside_the_grant_is_located_not_shown(
    client, users, org, events, django_user_model
):
    # An auditor of team:acme/ops reads part of the tenant:acme stream: its check walks that
    # whole chain, but an event at tenant:acme itself is named only by its position.
    team_auditor = django_user_model.objects.create_user("teamaud", password="pw-team-123")
    grant("teamaud", org.ops, "auditor", principal=Principal.system("cli:test"))
    target = LedgerEvent.objects.get(kind="memory.published", scope="tenant:acme")
    _tamper(target.id)
    response = login(client, team_auditor).post("/ledger/verify/", headers={"HX-Request": "true"})
    assert f"broken: stream tenant:acme, seq {target.seq} (an event outside your grants)" in (
        response.text
    )
    assert f"event {target.id}" not in response.text
    assert 'href="/ledger/?before' not in response.text


def test_the_last_verdict_is_kept_for_the_ledger_page(client, users, events):
    login(client, users.auditor)
    assert "Not checked yet" in client.get("/ledger/").text
    client.post("/ledger/verify/", headers={"HX-Request": "true"})
    assert client.session[VERIFICATION_KEY]["ok"] is True
    assert "verdict-ok" in client.get("/ledger/").text


# --- the indexes behind the page ---------------------------------------------------------


def _bulk_events(count=4000):
    """Enough rows of other kinds, scopes and principals for the planner's choice to mean
    something (the chain of this made-up stream is not valid; nothing verifies it here)."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO memory_core_ledgerevent
                (stream, seq, kind, scope, principal, actor_ref, payload, created_at,
                 prev_hash, hash)
            SELECT 'tenant:bulk', g, 'bulk.kind' || (g %% 7), 'tenant:bulk' || (g %% 50),
                   'key:bulk' || (g %% 20), NULL, '{}'::jsonb,
                   now() - make_interval(secs => g), md5('p' || g) || md5('q' || g),
                   md5('h' || g) || md5('i' || g)
            FROM generate_series(1, %s) AS g
            """,
            [count],
        )
        with as_owner():  # ANALYZE is the owner's
            cursor.execute("ANALYZE memory_core_ledgerevent")


@pytest.mark.parametrize(
    "query, index",
    [
        ("kind=memory.published", "ledger_kind_idx"),
        ("principal=user:owner", "ledger_principal_idx"),
        ("scope=team:acme/ops", "ledger_scope_idx"),
    ],
)
def test_the_filtered_ledger_page_walks_an_index(client, users, events, query, index):
    _bulk_events()
    with CaptureQueriesContext(connection) as queries:
        response = login(client, users.auditor).get(f"/ledger/?{query}")
    assert response.status_code == 200 and _ids(response)
    plan = explain(main_query(queries, "memory_core_ledgerevent"))
    print(f"EXPLAIN /ledger/?{query} (auditor of acme):\n{plan}")
    assert index in plan
    assert "Seq Scan" not in plan
