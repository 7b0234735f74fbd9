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
from tests.helpers import login


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


def _bulk(client, action, memories, **extra):
    return client.post(
        "/memories/bulk/", {"action": action, "m": [m.uid for m in memories], **extra}
    )


def test_bulk_first_answers_with_a_confirmation_and_changes_nothing(client, users, facts):
    login(client, users.owner)
    events = LedgerEvent.objects.count()
    chosen = [facts["acme-fy"], facts["ops-oncall"]]
    response = _bulk(client, "pin", chosen)
    assert response.status_code == 200
    assert "Pin 2 memories?" in response.text
    for m in chosen:
        assert m.uid in response.text and m.key in response.text
    assert LedgerEvent.objects.count() == events
    assert not Memory.objects.filter(pinned=True).exists()


def test_bulk_pin_writes_one_event_per_memory_under_one_bulk_id(client, users, facts):
    login(client, users.owner)
    chosen = [facts["acme-fy"], facts["ops-oncall"]]
    response = _bulk(client, "pin", chosen, confirm="1")
    assert response.status_code == 200
    assert "2 of 2 done" in response.text
    events = list(LedgerEvent.objects.filter(kind="memory.pinned"))
    assert {e.payload["memory"] for e in events} == {m.uid for m in chosen}
    bulk_ids = {e.payload["bulk"] for e in events}
    assert len(bulk_ids) == 1 and bulk_ids.pop() in response.text
    rows = AccessLog.objects.filter(action="pin", outcome=200)
    assert rows.count() == 2 and all(r.detail.get("bulk") for r in rows)


def test_bulk_reports_partial_failures_per_memory(client, users, facts):
    # The auditor of acme may read but not pin; globex's memory is beyond the grants (404).
    login(client, users.owner)
    curation.invalidate(facts["acme-budget"], "gone", principal=users.p_su)
    chosen = [facts["acme-fy"], facts["acme-budget"], facts["globex-secret"]]
    response = _bulk(client, "pin", chosen, confirm="1")
    assert "1 of 2 done" in response.text  # the unreadable one is left out before it runs
    assert "404" in response.text
    assert "globex-secret" not in response.text
    assert Memory.objects.get(pk=facts["acme-fy"].pk).pinned
    assert not Memory.objects.get(pk=facts["globex-secret"].pk).pinned


def test_bulk_refused_memories_are_logged_and_unchanged(client, users, facts):
    login(client, users.auditor)
    response = _bulk(client, "pin", [facts["acme-fy"]], confirm="1")
    assert "0 of 1 done" in response.text and "403" in response.text
    assert not LedgerEvent.objects.filter(kind="memory.pinned").exists()
    assert AccessLog.objects.filter(action="pin", outcome=403, principal="user:auditor").exists()


def test_bulk_invalidate_needs_a_reason(client, users, facts):
    login(client, users.owner)
    response = _bulk(client, "invalidate", [facts["acme-fy"]], confirm="1")
    assert response.status_code == 422
    assert Memory.objects.get(pk=facts["acme-fy"].pk).retired_at is None
    response = _bulk(client, "invalidate", [facts["acme-fy"]], confirm="1", reason="stale")
    assert "1 of 1 done" in response.text
    assert Memory.objects.get(pk=facts["acme-fy"].pk).retired_note == "stale"


def test_bulk_forget_needs_the_typed_count(client, users, facts):
    login(client, users.owner)
    chosen = [facts["acme-fy"], facts["acme-budget"]]
    response = _bulk(client, "forget", chosen, confirm="1", typed="1")
    assert response.status_code == 422
    assert Memory.objects.filter(key__in=["acme-fy", "acme-budget"]).count() == 2
    response = _bulk(client, "forget", chosen, confirm="1", typed="2")
    assert "2 of 2 done" in response.text
    assert not Memory.objects.filter(key__in=["acme-fy", "acme-budget"]).exists()
    bulk_ids = {e.payload["bulk"] for e in LedgerEvent.objects.filter(kind="memory.forgotten")}
    assert len(bulk_ids) == 1


def test_bulk_republish_wider_reports_memories_it_does_not_fit(client, users, facts):
    login(client, users.owner)
    chosen = [facts["ops-oncall"], facts["acme-fy"]]
    confirm = _bulk(client, "republish", chosen)
    assert "tenant:acme" in confirm.text
    response = _bulk(client, "republish", chosen, confirm="1", target="tenant:acme")
    assert "1 of 2 done" in response.text and "422" in response.text
    assert Memory.objects.live().filter(scope=facts["acme-fy"].scope, key="ops-oncall").exists()


def test_bulk_refuses_too_many_and_unknown_actions(client, users, facts, monkeypatch):
    from memory_core import bulk

    login(client, users.owner)
    assert _bulk(client, "explode", [facts["acme-fy"]], confirm="1").status_code == 422
    monkeypatch.setattr(bulk, "MAX_BATCH", 1)
    chosen = [facts["acme-fy"], facts["acme-budget"]]
    assert _bulk(client, "pin", chosen, confirm="1").status_code == 422
    assert not Memory.objects.filter(pinned=True).exists()


def test_bulk_get_goes_to_the_finder(client, users):
    login(client, users.owner)
    response = client.get("/memories/bulk/")
    assert response.status_code == 302 and response["Location"] == "/memories/"


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
