"""The memory finder (/memories/): privacy across tenants, filters, counts, sorting, paging;
and bulk actions (/memories/bulk/): confirmation first, one ledger event per memory under
one bulk id, partial failures reported per memory, refusals with no side effects."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from memory_console.console.finder import reads as finder
from memory_core import curation, writes
from memory_core.models import AccessLog, LedgerEvent, Memory
from tests.helpers import login, refusals


def _keys(response) -> list[str]:
    return re.findall(r'<td class="key"><a href="/memories/[^"]+/">([^<]+)</a>', response.text)


@pytest.fixture
def facts(org, users):
    made = {}
    for key, scope in [
        ("acme-fy", org.acme),
        ("ops-oncall", org.ops),
        ("globex-secret", org.globex),
        ("acme-budget", org.acme),
    ]:
        text = f"the {key} fact about budgets"
        made[key] = writes.publish(scope, key, text, principal=users.p_su)
    return made


# --- the finder -------------------------------------------------------------------------


def test_anonymous_is_sent_to_login(client, users):
    response = client.get("/memories/")
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


def test_finder_lists_only_memories_at_readable_scopes(client, users, facts):
    login(client, users.owner)
    response = client.get("/memories/")
    assert response.status_code == 200
    assert set(_keys(response)) == {"acme-fy", "ops-oncall", "acme-budget"}
    assert "globex-secret" not in response.text
    assert "3 memories" in response.text  # another tenant's memory is in no count


def test_finder_search_never_reaches_another_tenant(client, users, facts):
    login(client, users.outsider)
    response = client.get("/memories/", {"q": "budgets"})
    assert _keys(response) == ["globex-secret"]
    assert "1 memory match" in response.text


def test_superuser_reads_every_scope(client, users, facts):
    login(client, users.su)
    assert len(_keys(client.get("/memories/"))) == 4


def test_finder_is_written_to_the_access_log(client, users, facts):
    login(client, users.owner)
    client.get("/memories/")
    row = AccessLog.objects.filter(action="memory.find").latest("id")
    assert row.principal == "user:owner" and row.count == 3


@pytest.mark.parametrize(
    "params, expected",
    [
        ({"kind": "team"}, {"ops-oncall"}),
        ({"scope": "tenant:acme"}, {"acme-fy", "acme-budget"}),
        ({"q": "oncall"}, {"ops-oncall"}),
        ({"q": "budget", "scope": "tenant:acme"}, {"acme-fy", "acme-budget"}),
        ({"author": "agent"}, set()),
        ({"pinned": "yes"}, set()),
    ],
)
def test_finder_filters(client, users, facts, params, expected):
    login(client, users.owner)
    assert set(_keys(client.get("/memories/", params))) == expected


def test_state_filter_finds_superseded_and_invalidated(client, users, facts):
    writes.publish(facts["acme-fy"].scope, "acme-fy", "corrected", principal=users.p_su)
    curation.invalidate(facts["acme-budget"], "wrong", principal=users.p_su)
    login(client, users.owner)
    assert _keys(client.get("/memories/", {"state": "superseded"})) == ["acme-fy"]
    assert _keys(client.get("/memories/", {"state": "invalidated"})) == ["acme-budget"]
    assert set(_keys(client.get("/memories/"))) == {"acme-fy", "ops-oncall"}
    assert len(_keys(client.get("/memories/", {"state": "any"}))) == 4


def test_tag_pinned_and_date_filters(client, users, org):
    writes.publish(org.acme, "tagged", "t", principal=users.p_su, tags=["finance"], pinned=True)
    writes.publish(org.acme, "plain", "p", principal=users.p_su)
    login(client, users.owner)
    assert _keys(client.get("/memories/", {"tag": "finance"})) == ["tagged"]
    assert _keys(client.get("/memories/", {"pinned": "yes"})) == ["tagged"]
    today = timezone.localdate()
    assert len(_keys(client.get("/memories/", {"since": today.isoformat()}))) == 2
    yesterday = (today - timedelta(days=1)).isoformat()
    assert _keys(client.get("/memories/", {"until": yesterday})) == []


def test_sorting_by_key_and_by_age(client, users, facts):
    login(client, users.owner)
    assert _keys(client.get("/memories/", {"sort": "key"})) == [
        "acme-budget",
        "acme-fy",
        "ops-oncall",
    ]
    newest = _keys(client.get("/memories/"))
    assert _keys(client.get("/memories/", {"sort": "old"})) == list(reversed(newest))


def test_paging_and_the_capped_count(client, users, org, monkeypatch):
    for n in range(7):
        writes.publish(org.acme, f"k{n}", "t", principal=users.p_su)
    monkeypatch.setattr(finder, "PAGE_SIZE", 3)
    login(client, users.owner)
    first = client.get("/memories/")
    assert "page 1 of 3" in first.text and len(_keys(first)) == 3
    last = client.get("/memories/", {"page": 3})
    assert len(_keys(last)) == 1
    monkeypatch.setattr(finder, "COUNT_CAP", 5)
    capped = client.get("/memories/")
    assert "more than 5 memories match" in capped.text


def test_htmx_gets_the_rows_alone(client, users, facts):
    login(client, users.owner)
    response = client.get("/memories/", HTTP_HX_REQUEST="true")
    assert response.text.lstrip().startswith("{#") is False
    assert 'id="finder-rows"' in response.text and "<html" not in response.text


def test_user_written_text_is_escaped(client, users, org):
    writes.publish(org.acme, "xss", "<script>alert(1)</script>", principal=users.p_su)
    login(client, users.owner)
    response = client.get("/memories/")
    assert "<script>alert(1)" not in response.text
    assert "&lt;script&gt;" in response.text


# --- bulk actions ------------------------------------------------------------------------


def _review(client, action, memories, **extra):
    return client.get(
        "/memories/bulk/", {"action": action, "m": [m.uid for m in memories], **extra}
    )


def _bulk(client, action, memories, **extra):
    """The confirmation POST: a 303 to the bulk's report (or the review again, 422)."""
    return client.post(
        "/memories/bulk/",
        {"action": action, "m": [m.uid for m in memories], "confirm": "1", **extra},
    )


def _report(client, response):
    """The report a confirmation redirected to."""
    assert response.status_code == 303, response.status_code
    assert re.fullmatch(r"/memories/bulk/bulk_[0-9A-Z]{26}/", response["Location"])
    return client.get(response["Location"])


def _records():
    return AccessLog.objects.filter(action="bulk")


def test_bulk_review_is_a_get_that_changes_nothing(client, users, facts):
    login(client, users.owner)
    events = LedgerEvent.objects.count()
    chosen = [facts["acme-fy"], facts["ops-oncall"]]
    response = _review(client, "pin", chosen)
    assert response.status_code == 200
    assert "Pin 2 memories?" in response.text
    for m in chosen:
        assert m.uid in response.text and m.key in response.text and m.text in response.text
    assert LedgerEvent.objects.count() == events and not _records().exists()
    assert not Memory.objects.filter(pinned=True).exists()
    row = AccessLog.objects.get(action="bulk.review")
    assert set(row.memory_ids) == {m.uid for m in chosen}


def test_a_posted_selection_is_sent_to_its_review(client, users, facts):
    # The scope page's form POSTs its ticks: the answer is the review's address, a GET.
    login(client, users.owner)
    chosen = [facts["acme-fy"], facts["acme-budget"]]
    response = client.post(
        "/memories/bulk/",
        {"action": "pin", "m": [m.uid for m in chosen], "next": "/scopes/tenant:acme/"},
    )
    assert response.status_code == 303
    review = client.get(response["Location"])
    assert "Pin 2 memories?" in review.text and 'href="/scopes/tenant:acme/"' in review.text
    assert not Memory.objects.filter(pinned=True).exists()


def test_the_review_escapes_each_memorys_text(client, users, org):
    hostile = writes.publish(org.acme, "xss", "<img src=x onerror=alert(1)>", principal=users.p_su)
    login(client, users.owner)
    response = _review(client, "pin", [hostile])
    assert "<img src=x" not in response.text
    assert "&lt;img src=x onerror=alert(1)&gt;" in response.text


def test_bulk_pin_answers_303_and_its_report_is_read_back(client, users, facts):
    login(client, users.owner)
    chosen = [facts["acme-fy"], facts["ops-oncall"]]
    response = _bulk(client, "pin", chosen)
    report = _report(client, response)
    assert report.status_code == 200 and "Pin: 2 of 2 done" in report.text
    events = list(LedgerEvent.objects.filter(kind="memory.pinned"))
    assert {e.payload["memory"] for e in events} == {m.uid for m in chosen}
    bulk_ids = {e.payload["bulk"] for e in events}
    assert len(bulk_ids) == 1 and response["Location"] == f"/memories/bulk/{bulk_ids.pop()}/"
    rows = AccessLog.objects.filter(action="pin", outcome=200)
    assert rows.count() == 2 and all(r.detail.get("bulk") for r in rows)
    for m in chosen:
        assert m.key in report.text


def test_reloading_a_bulk_report_runs_nothing_again(client, users, facts):
    login(client, users.owner)
    chosen = [facts["acme-fy"], facts["ops-oncall"]]
    response = _bulk(client, "republish", chosen, target="tenant:acme", pin="original")
    first = _report(client, response)
    events, versions, records = LedgerEvent.objects.count(), Memory.objects.count(), 1
    again = client.get(response["Location"])
    assert again.status_code == 200
    assert _outcomes(again) == _outcomes(first)
    assert LedgerEvent.objects.count() == events and Memory.objects.count() == versions
    assert _records().count() == records
    assert LedgerEvent.objects.filter(kind="memory.promoted").count() == 1


def test_reloading_a_bulk_forget_report_shows_the_same_report(client, users, facts):
    login(client, users.owner)
    chosen = [facts["acme-fy"], facts["acme-budget"]]
    response = _bulk(client, "forget", chosen, typed="2")
    for _ in range(2):
        report = client.get(response["Location"])
        assert report.status_code == 200
        assert "Forget: 2 of 2 done" in report.text and "Forget 0" not in report.text
    assert LedgerEvent.objects.filter(kind="memory.forgotten").count() == 2
    assert "Forgetting cannot be undone" in report.text


def _outcomes(response) -> list[str]:
    body = response.text.split('id="bulk-outcomes"', 1)[1].split("</table>", 1)[0]
    return re.findall(r"<tr.*?</tr>", body, flags=re.S)


def test_a_bulk_of_another_tenant_is_404_and_logged(client, users, facts):
    login(client, users.owner)
    response = _bulk(client, "pin", [facts["acme-fy"]])
    login(client, users.outsider)
    assert client.get(response["Location"]).status_code == 404
    assert client.get(response["Location"] + "undo/").status_code == 404
    refused = AccessLog.objects.filter(action="bulk.read", outcome=404, principal="user:outsider")
    assert refused.get().detail["bulk"] == response["Location"].split("/")[3]


def test_an_unknown_bulk_id_is_404(client, users):
    login(client, users.owner)
    assert client.get("/memories/bulk/bulk_01ARZ3NDEKTSV4RRFFQ69G5FAV/").status_code == 404
    assert client.get("/memories/bulk/nonsense/").status_code == 404


def test_an_auditor_reads_a_bulk_report_of_their_tenant_but_may_not_undo(client, users, facts):
    login(client, users.owner)
    response = _bulk(client, "pin", [facts["acme-fy"]])
    login(client, users.auditor)
    report = client.get(response["Location"])
    assert report.status_code == 200 and "Pin: 1 of 1 done" in report.text
    assert "Review the undo" not in report.text
    undo = client.post(response["Location"] + "undo/")
    assert undo.status_code == 403
    assert Memory.objects.get(pk=facts["acme-fy"].pk).pinned
    assert refusals("bulk.undo", 403, "user:auditor").exists()


def test_bulk_reports_partial_failures_per_memory(client, users, facts):
    login(client, users.owner)
    curation.invalidate(facts["acme-budget"], "gone", principal=users.p_su)
    chosen = [facts["acme-fy"], facts["acme-budget"], facts["globex-secret"]]
    report = _report(client, _bulk(client, "pin", chosen))
    assert "1 of 2 done" in report.text  # the unreadable one is left out before it runs
    assert "not found, or no longer live" in report.text
    assert "globex-secret" not in report.text
    assert Memory.objects.get(pk=facts["acme-fy"].pk).pinned
    assert not Memory.objects.get(pk=facts["globex-secret"].pk).pinned


def test_bulk_refused_memories_are_logged_and_unchanged(client, users, facts):
    login(client, users.auditor)
    report = _report(client, _bulk(client, "pin", [facts["acme-fy"]]))
    assert "0 of 1 done" in report.text and "not allowed" in report.text
    assert not LedgerEvent.objects.filter(kind="memory.pinned").exists()
    assert AccessLog.objects.filter(action="pin", outcome=403, principal="user:auditor").exists()


def test_bulk_invalidate_needs_a_reason(client, users, facts):
    login(client, users.owner)
    response = _bulk(client, "invalidate", [facts["acme-fy"]])
    assert response.status_code == 422
    assert Memory.objects.get(pk=facts["acme-fy"].pk).retired_at is None
    report = _report(client, _bulk(client, "invalidate", [facts["acme-fy"]], reason="stale"))
    assert "1 of 1 done" in report.text
    assert Memory.objects.get(pk=facts["acme-fy"].pk).retired_note == "stale"
    assert "stale" not in str(_records().get().detail)  # a reason may quote the fact


def test_bulk_forget_needs_the_typed_count(client, users, facts):
    login(client, users.owner)
    chosen = [facts["acme-fy"], facts["acme-budget"]]
    response = _bulk(client, "forget", chosen, typed="1")
    assert response.status_code == 422
    assert Memory.objects.filter(key__in=["acme-fy", "acme-budget"]).count() == 2
    report = _report(client, _bulk(client, "forget", chosen, typed="2"))
    assert "2 of 2 done" in report.text
    assert not Memory.objects.filter(key__in=["acme-fy", "acme-budget"]).exists()
    bulk_ids = {e.payload["bulk"] for e in LedgerEvent.objects.filter(kind="memory.forgotten")}
    assert len(bulk_ids) == 1


def test_bulk_republish_wider_reports_memories_it_does_not_fit(client, users, facts):
    login(client, users.owner)
    chosen = [facts["ops-oncall"], facts["acme-fy"]]
    review = _review(client, "republish", chosen)
    assert "tenant:acme" in review.text
    report = _report(client, _bulk(client, "republish", chosen, target="tenant:acme"))
    assert "1 of 2 done" in report.text and "tenant:acme is not wider than its scope" in report.text
    assert Memory.objects.live().filter(scope=facts["acme-fy"].scope, key="ops-oncall").exists()


def test_bulk_refuses_too_many_and_unknown_actions(client, users, facts, monkeypatch):
    from memory_core import bulk

    login(client, users.owner)
    assert _bulk(client, "explode", [facts["acme-fy"]]).status_code == 422
    assert _review(client, "explode", [facts["acme-fy"]]).status_code == 422
    monkeypatch.setattr(bulk, "MAX_BATCH", 1)
    chosen = [facts["acme-fy"], facts["acme-budget"]]
    assert _bulk(client, "pin", chosen).status_code == 422
    assert not Memory.objects.filter(pinned=True).exists() and not _records().exists()


def test_a_review_of_nothing_ticked_is_422(client, users, facts):
    login(client, users.owner)
    response = client.get("/memories/bulk/", {"action": "pin", "select": "ticked"})
    assert response.status_code == 422 and "select at least one memory" in response.text


def test_bulk_get_without_an_action_goes_to_the_finder(client, users):
    login(client, users.owner)
    response = client.get("/memories/bulk/")
    assert response.status_code == 302 and response["Location"] == "/memories/"


# --- selecting: every row of the page, every match, unique labels ---------------------------


def test_select_all_on_this_page_reviews_the_pages_rows(client, users, org, monkeypatch):
    for n in range(5):
        writes.publish(org.acme, f"k{n}", f"fact {n}", principal=users.p_su)
    monkeypatch.setattr(finder, "PAGE_SIZE", 2)
    login(client, users.owner)
    page = client.get("/memories/", {"sort": "key", "page": 2})
    assert 'form="bulk-form" name="page" value="2"' in page.text
    assert 'form="bulk-form" name="sort" value="key"' in page.text
    response = client.get(
        "/memories/bulk/", {"action": "pin", "select": "page", "sort": "key", "page": 2}
    )
    assert "Pin 2 memories?" in response.text
    assert re.findall(r'<td class="key">([^<]+)</td>', response.text) == ["k2", "k3"]


def test_select_every_match_takes_the_filters_up_to_the_stated_cap(client, users, org, monkeypatch):
    from memory_core import bulk

    for n in range(4):
        writes.publish(org.acme, f"budget-{n}", f"budget line {n}", principal=users.p_su)
    writes.publish(org.acme, "other", "nothing alike", principal=users.p_su)
    login(client, users.owner)
    finder_page = client.get("/memories/", {"q": "budget"})
    assert "Review every match (up to 200)" in finder_page.text
    query = {"action": "pin", "select": "matches", "q": "budget", "sort": "key"}
    response = client.get("/memories/bulk/", query)
    assert "Pin 4 memories?" in response.text and "other" not in response.text
    monkeypatch.setattr(bulk, "MAX_BATCH", 3)
    capped = client.get("/memories/bulk/", query)
    assert "Pin 3 memories?" in capped.text
    assert "4 memories match, and one bulk action takes at most 3" in capped.text
    assert re.findall(r'<td class="key">([^<]+)</td>', capped.text) == [
        "budget-0",
        "budget-1",
        "budget-2",
    ]


def test_every_match_never_reaches_another_tenant(client, users, facts):
    login(client, users.owner)
    response = client.get("/memories/bulk/", {"action": "pin", "select": "matches", "q": "budgets"})
    assert "globex-secret" not in response.text and "Pin 3 memories?" in response.text


def test_each_row_checkbox_has_a_label_of_its_own(client, users, org):
    for scope in (org.acme, org.ops, org.u1.scope, org.u2.scope):
        writes.publish(scope, "timezone", "CET", principal=users.p_su)
    old = writes.publish(org.u1.scope, "timezone", "UTC", principal=users.p_su)
    login(client, users.owner)
    labels = re.findall(r'form="bulk-form" aria-label="([^"]+)"', client.get("/memories/").text)
    assert "select timezone at actor:acme/u1" in labels
    assert len(labels) == len(set(labels)) == 4
    every = client.get("/memories/", {"state": "any"}).text
    labels = re.findall(r'form="bulk-form" aria-label="([^"]+)"', every)
    assert len(labels) == len(set(labels)) == 5
    superseded = Memory.objects.get(scope=org.u1.scope, key="timezone", text="CET")
    assert f"select timezone at actor:acme/u1, superseded version {superseded.uid}" in labels
    assert old.uid != superseded.uid


def test_scope_page_offers_bulk_selection_to_its_administrators_only(client, users, facts):
    login(client, users.owner)
    response = client.get("/scopes/tenant:acme/")
    assert 'id="bulk-form"' in response.text
    assert f'value="{facts["acme-fy"].uid}" form="bulk-form"' in response.text
    login(client, users.auditor)
    assert 'id="bulk-form"' not in client.get("/scopes/tenant:acme/").text


def test_a_search_at_another_tenants_scope_finds_nothing(client, users, facts):
    login(client, users.owner)
    response = client.get("/memories/", {"scope": "tenant:globex", "q": "budgets"})
    assert _keys(response) == [] and "0 memories match" in response.text


def test_past_the_capped_count_the_pager_goes_on_while_pages_are_full(
    client, users, org, monkeypatch
):
    for n in range(7):
        writes.publish(org.acme, f"k{n}", "t", principal=users.p_su)
    monkeypatch.setattr(finder, "PAGE_SIZE", 3)
    monkeypatch.setattr(finder, "COUNT_CAP", 4)
    login(client, users.owner)
    first = client.get("/memories/")
    assert "more than 4 memories match" in first.text and "page 1" in first.text
    assert 'rel="next"' in first.text and len(_keys(first)) == 3
    # Without JavaScript the link is a plain address; with htmx it swaps the rows alone.
    assert 'href="/memories/?page=2"' in first.text
    second = client.get("/memories/", {"page": 2}, HTTP_HX_REQUEST="true")
    assert "<html" not in second.text and len(_keys(second)) == 3
    third = client.get("/memories/", {"page": 3})
    assert len(_keys(third)) == 1 and 'rel="next"' not in third.text
    assert 'rel="prev"' in third.text
