"""The access-log page: who sees which rows, filters, refusals highlighted and counted over
a window, id-cursor paging while rows arrive, and the indexes behind its queries."""

import re
from datetime import timedelta

import pgtrigger
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memory_core import writes
from memory_core.accounts.principals import Principal
from memory_core.errors import Forbidden
from memory_core.ledger import access_log
from memory_core.models import AccessLog
from tests.code_reading import logged_outcomes, raises_base_domain_error
from tests.helpers import explain, login, main_query
from tests.roles import as_owner

ACME_TOKENS = {"tenant:acme", "team:acme/ops", "actor:acme/u1", "actor:acme/u2"}
ACME_ACTORS = {"acme/u1", "acme/u2"}


def _ids(response) -> list[int]:
    return [int(i) for i in re.findall(r'<tr id="access-(\d+)"', response.text)]


def _refused_ids(response) -> set[int]:
    return {int(i) for i in re.findall(r'<tr id="access-(\d+)" class="refused"', response.text)}


def _refused_count(response) -> int:
    return int(re.search(r'<strong class="refused-count">(\d+)</strong>', response.text).group(1))


def _visible_to_acme() -> set[int]:
    rows = AccessLog.objects.filter(scope__in=ACME_TOKENS) | AccessLog.objects.filter(
        actor_ref__in=ACME_ACTORS
    )
    return set(rows.values_list("id", flat=True))


def _backdate(row_id, delta):
    # As the owner: the server's role may not UPDATE the access log at all.
    with as_owner(), pgtrigger.ignore("memory_core.AccessLog:access_append_only"):
        AccessLog.objects.filter(id=row_id).update(created_at=timezone.now() - delta)


@pytest.fixture
def traffic(users, org):
    """Reads, writes and refusals in both tenants, plus rows that name neither."""
    writes.publish(org.acme, "fiscal-year", "starts in October", principal=users.p_owner)
    writes.remember(org.u1, "tz", "works in CET", principal=org.acme_agent)
    writes.remember(org.x9, "tz", "works in PST", principal=org.globex_agent)
    # The outsider probes acme: refused, and logged at acme's scope.
    with pytest.raises(Forbidden):
        writes.publish(org.acme, "probe", "let me in", principal=users.p_outsider)
    # An acme key asks for globex's actor: a reach refusal, for actor x9.
    access_log.record(
        org.acme_agent, "actor.lookup", 404, actor_ref="globex/x9", detail={"reason": "reach"}
    )
    # Refusals for u1 of each kind the API answers.
    for status in (403, 404, 422):
        access_log.record(org.globex_agent, "remember", status, actor_ref="acme/u1")
    # Rows with neither a scope nor a known actor: a superuser's only.
    access_log.record(org.acme_agent, "actor.lookup", 404, actor_ref="ghost")
    access_log.record(Principal.system("cli:probe"), "search", 401)


# --- who gets in, and what they see ----------------------------------------------------


def test_anonymous_is_sent_to_login(client, users):
    response = client.get("/access/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_superuser_sees_every_row(client, users, traffic):
    response = login(client, users.su).get("/access/")
    assert set(_ids(response)) == set(AccessLog.objects.values_list("id", flat=True))
    assert "ghost" in response.text and "cli:probe" in response.text


@pytest.mark.parametrize("who", ["owner", "auditor"])
def test_acme_readers_see_rows_at_their_scopes_or_for_their_actors(client, users, traffic, who):
    response = login(client, getattr(users, who)).get("/access/")
    assert response.status_code == 200
    shown = set(_ids(response))
    assert shown == _visible_to_acme()
    globex = set(
        AccessLog.objects.filter(scope__in=["tenant:globex", "actor:globex/x9"]).values_list(
            "id", flat=True
        )
    )
    assert globex and not shown & globex
    assert ">x9<" not in response.text  # the reach refusal for globex's actor stays hidden
    assert "ghost" not in response.text and "cli:probe" not in response.text
    # The outsider's probe of acme is acme's business: it shows, refused.
    probe = AccessLog.objects.get(action="publish", outcome=403).id
    assert probe in _refused_ids(response)


def test_outsider_sees_only_globex_rows(client, users, traffic):
    response = login(client, users.outsider).get("/access/")
    shown = set(_ids(response))
    expected = AccessLog.objects.filter(scope__in=["tenant:globex", "actor:globex/x9"]) | (
        AccessLog.objects.filter(actor_ref="globex/x9")
    )
    assert shown == set(expected.values_list("id", flat=True))
    assert "tenant:acme" not in response.text and ">acme/u1<" not in response.text


def test_user_without_grants_sees_no_rows(client, users, traffic, django_user_model):
    nobody = django_user_model.objects.create_user("nobody", password="pw-nobody-123")
    response = login(client, nobody).get("/access/")
    assert response.status_code == 200 and _ids(response) == []
    assert _refused_count(response) == 0


# --- filters ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query, expected",
    [
        ("principal=user:owner", {"principal": "user:owner"}),
        ("actor=acme/u1", {"actor_ref": "acme/u1"}),
        ("action=remember", {"action": "remember"}),
        ("outcome=422", {"outcome": 422}),
        ("actor=acme/u1&outcome=404", {"actor_ref": "acme/u1", "outcome": 404}),
    ],
)
def test_filters_narrow_the_list(client, users, traffic, query, expected):
    response = login(client, users.su).get(f"/access/?{query}")
    wanted = set(AccessLog.objects.filter(**expected).values_list("id", flat=True))
    assert wanted and set(_ids(response)) == wanted


def test_refused_only_lists_every_refusal_the_reader_may_see(client, users, traffic):
    response = login(client, users.auditor).get("/access/?refused=on")
    refused = {i for i in _visible_to_acme() if AccessLog.objects.get(id=i).outcome >= 400}
    assert set(_ids(response)) == refused == _refused_ids(response)
    assert len(refused) == 4  # the outsider's publish and u1's 403, 404, 422


def test_time_filter_narrows_the_list(client, users, traffic):
    old = AccessLog.objects.get(action="publish", outcome=403).id
    _backdate(old, timedelta(days=3))
    login(client, users.su)
    assert old not in _ids(client.get("/access/?window=24h"))
    assert old in _ids(client.get("/access/?window=7d"))
    until = (timezone.now() - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")
    assert _ids(client.get(f"/access/?until={until}")) == [old]


# --- refusals at a glance --------------------------------------------------------------


def test_refusals_are_highlighted_and_counted(client, users, traffic):
    response = login(client, users.su).get("/access/")
    refused = set(AccessLog.objects.filter(outcome__gte=400).values_list("id", flat=True))
    assert _refused_ids(response) == refused
    assert response.text.count('<span class="refused-label">refused</span>') == len(refused)
    assert _refused_count(response) == len(refused) == 7
    assert "in the last 24 hours" in response.text
    assert "has-refusals" in response.text
    # The principals refused most are listed, each linking to its refusals.
    assert re.search(r'class="prober" href="/access/\?[^"]*principal=key%3A', response.text)


def test_the_refusal_count_is_the_readers_own(client, users, traffic):
    assert _refused_count(login(client, users.auditor).get("/access/")) == 4
    # Globex's admin sees one: acme's key probing globex's actor x9.
    response = login(client, users.outsider).get("/access/")
    assert _refused_count(response) == 1
    assert _refused_ids(response) == {AccessLog.objects.get(actor_ref="globex/x9", outcome=404).id}


def test_the_refusal_count_covers_the_selected_window(client, users, traffic):
    probe = AccessLog.objects.get(action="publish", outcome=403).id
    _backdate(probe, timedelta(days=3))
    login(client, users.auditor)
    assert _refused_count(client.get("/access/")) == 3  # the default: the last 24 hours
    week = client.get("/access/?window=7d")
    assert _refused_count(week) == 4 and "in the last 7 days" in week.text
    assert _refused_count(client.get("/access/?window=7d&actor=acme/u1")) == 3


def test_a_quiet_log_says_so(client, users, org):
    response = login(client, users.owner).get("/access/")
    assert _refused_count(response) == 0 and "has-refusals" not in response.text


# --- paging by id cursor -----------------------------------------------------------------


def test_cursor_paging_has_no_duplicates_or_gaps_while_rows_arrive(client, users, org):
    for _ in range(60):
        access_log.record(org.acme_agent, "turn", 200, actor_ref="acme/u1")
    originals = list(
        AccessLog.objects.filter(action="turn").order_by("-id").values_list("id", flat=True)
    )
    login(client, users.auditor)
    first = client.get("/access/?action=turn")
    assert _ids(first) == originals[:50]
    older = re.search(r'href="(/access/\?[^"]*before=(\d+)[^"]*)"', first.text)
    assert older and int(older.group(2)) == originals[49]
    for _ in range(5):  # arriving between the two requests
        access_log.record(org.acme_agent, "turn", 200, actor_ref="acme/u1")
    second = client.get(older.group(1).replace("&amp;", "&"))
    assert _ids(first) + _ids(second) == originals
    assert "older ›" not in second.text and "‹ newer" in second.text


def test_htmx_filter_request_gets_only_the_rows_fragment(client, users, traffic):
    fragment = login(client, users.auditor).get(
        "/access/?refused=on", headers={"HX-Request": "true"}
    )
    assert fragment.text.lstrip().startswith('<section id="access-rows"')
    assert "<html" not in fragment.text and "refused-count" in fragment.text


# --- the indexes behind the page ---------------------------------------------------------


def _bulk_rows(count=4000):
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO memory_core_accesslog
                (created_at, channel, principal, actor_ref, action, outcome, scope,
                 memory_ids, count, detail)
            SELECT now() - make_interval(secs => g), 'api', 'key:bulk' || (g %% 20),
                   'bulk' || (g %% 300), 'bulk.read', CASE WHEN g %% 500 = 0 THEN 403 ELSE 200 END,
                   'tenant:bulk' || (g %% 50), '{}', 0, '{}'::jsonb
            FROM generate_series(1, %s) AS g
            """,
            [count],
        )
        with as_owner():  # ANALYZE is the owner's
            cursor.execute("ANALYZE memory_core_accesslog")


@pytest.mark.parametrize(
    "who, query, index",
    [
        ("auditor", "actor=acme/u1", "access_actor_idx"),
        ("auditor", "principal=user:owner", "access_principal_idx"),
        ("su", "action=remember", "access_action_idx"),
        ("su", "refused=on", "access_refused"),  # access_refused_idx or _recent_idx
    ],
)
def test_the_filtered_access_page_walks_an_index(client, users, traffic, who, query, index):
    _bulk_rows()
    with CaptureQueriesContext(connection) as queries:
        response = login(client, getattr(users, who)).get(f"/access/?{query}")
    assert response.status_code == 200 and _ids(response)
    plan = explain(main_query(queries, "memory_core_accesslog"))
    print(f"EXPLAIN /access/?{query} ({who}):\n{plan}")
    assert index in plan
    assert "Seq Scan" not in plan


def test_the_refusal_count_reads_an_index_within_its_window(client, users, traffic):
    _bulk_rows()
    with CaptureQueriesContext(connection) as queries:
        login(client, users.auditor).get("/access/")
    count_sql = next(
        q["sql"]
        for q in queries
        if 'FROM "memory_core_accesslog"' in q["sql"] and "COUNT(*)" in q["sql"]
    )
    assert '"created_at" >=' in count_sql  # bounded by the window's start
    plan = explain(count_sql)
    print(f"EXPLAIN refusal count (auditor, last 24 h):\n{plan}")
    assert "access_refused" in plan  # access_refused_recent_idx or access_refused_idx
    assert "Seq Scan" not in plan


# --- the memories a row names -----------------------------------------------------


def test_each_row_names_its_memory_ids_linking_only_to_readable_memories(client, users, org):
    mine = writes.publish(org.acme, "policy", "a secret acme policy", principal=users.p_owner)
    theirs = writes.publish(org.globex, "plan", "a globex plan", principal=users.p_outsider)
    # One row naming both (as a superuser's bulk read would): the auditor may open only one.
    access_log.record(
        users.p_su, "memory.read", 200, scope="tenant:acme", memory_ids=[mine.uid, theirs.uid]
    )
    response = login(client, users.auditor).get("/access/?action=memory.read")
    assert response.status_code == 200
    text = response.text
    assert f'href="/memories/{mine.uid}/"' in text
    assert theirs.uid in text and f'href="/memories/{theirs.uid}/"' not in text
    # Ids only: never a key or a fact.
    for secret in ("policy", "a secret acme policy", "plan", "a globex plan"):
        assert secret not in text.split('id="access-rows"')[1]


# --- the outcome filter offers what can be logged ------------------------------------------


def test_the_outcome_filter_offers_exactly_the_statuses_the_code_can_log(client, users):
    assert not raises_base_domain_error()  # else its 400 could be logged too
    page = login(client, users.auditor).get("/access/").text
    select = re.search(r'<select name="outcome">(.*?)</select>', page, re.S)[1]
    offered = {int(v) for v in re.findall(r'<option value="(\d+)"', select)}
    assert offered == logged_outcomes()
    # A request without a valid key is a 401 and is never logged: no filter for it.
    assert 401 not in offered and "no key" not in select


def test_an_outcome_that_cannot_be_logged_is_no_export_filter(client, users, traffic):
    response = login(client, users.su).get("/exports/access.jsonl?outcome=401")
    assert response.status_code == 422 and "outcome" in response.json()["detail"]
    assert not AccessLog.objects.filter(action="export.access").exists()
