"""The ledger, access-log and attribution pages link their exports with the page's filters:
the link's query is the filters as the page applied them (names qualified, no paging
cursor), and the export holds exactly the rows the filters show, every page of them."""

import json
import re
from datetime import timedelta
from html import unescape
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.utils import timezone

from memory_core import transcripts, turns, writes
from memory_core.ledger import access_log
from memory_core.models import AccessLog, LedgerEvent
from tests.helpers import login

PAGE = 50


def _links(text: str, export: str) -> dict[str, str]:
    """{format label: href} of the page's export links to `export` (e.g. "ledger")."""
    found = re.findall(rf'<a href="(/exports/{export}[^"]*)" download>([^<]+)</a>', text)
    return {label: unescape(href) for href, label in found}


def _query(href: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(href).query, keep_blank_values=True)


def _exported(client, href: str) -> list[dict]:
    response = client.get(href)
    assert response.status_code == 200, response.content[:300]
    lines = [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]
    assert "manifest" in lines[-1]
    return lines[:-1]


def _page_ids(client, path: str, row_id: str) -> list[int]:
    """Every row id the page lists, following its "older" links to the last page."""
    ids, address = [], path
    while address:
        text = client.get(address).text
        ids += [int(i) for i in re.findall(rf'<tr id="{row_id}-(\d+)"', text)]
        older = re.search(r'<a href="([^"]+)"[^>]*rel="next">older', text)
        address = unescape(older[1]) if older else None
    return ids


@pytest.fixture
def many(org, users):
    """More published memories than one page holds, in acme and in globex."""
    for n in range(PAGE + 12):
        writes.publish(org.acme, f"k{n}", f"fact {n}", principal=users.p_owner)
    writes.publish(org.globex, "plan", "globex only", principal=users.p_outsider)


# --- the ledger --------------------------------------------------------------------------------


def test_the_ledger_links_its_export_with_its_filters_and_every_page(client, users, many):
    login(client, users.auditor)
    first = client.get("/ledger/?kind=memory.published&window=24h")
    older = re.search(r'href="([^"]+)"[^>]*rel="next"', first.text)[1]
    second = client.get(unescape(older))  # the second page links the same export
    for page in (first, second):
        links = _links(page.text, "ledger")
        assert set(links) == {"CSV", "JSON Lines"}
        assert links["CSV"].startswith("/exports/ledger.csv?")
        assert _query(links["JSON Lines"]) == {"kind": ["memory.published"], "window": ["24h"]}
    shown = _page_ids(client, "/ledger/?kind=memory.published&window=24h", "event")
    assert len(shown) == PAGE + 12  # two pages
    exported = _exported(client, _links(first.text, "ledger")["JSON Lines"])
    assert sorted(row["id"] for row in exported) == sorted(shown)
    csv_text = b"".join(client.get(_links(first.text, "ledger")["CSV"]).streaming_content)
    assert len(csv_text.decode().splitlines()) == len(shown) + 1  # the header


def test_the_ledger_links_names_qualified_and_leaves_out_a_since_the_window_overrides(
    client, users, many
):
    login(client, users.auditor)
    query = urlencode({"scope": "tenant:acme", "window": "7d", "since": "2020-01-01T00:00"})
    text = client.get(f"/ledger/?{query}").text
    href = _links(text, "ledger")["JSON Lines"]
    assert _query(href) == {"scope": ["tenant:acme"], "window": ["7d"]}
    shown = _page_ids(client, f"/ledger/?{query}", "event")
    assert sorted(r["id"] for r in _exported(client, href)) == sorted(shown)
    relative = client.get("/ledger/?scope=team:ops").text
    assert _query(_links(relative, "ledger")["CSV"]) == {"scope": ["team:acme/ops"]}


def test_an_exact_since_and_until_round_trip_to_the_second(client, users, org, many):
    login(client, users.su)
    events = list(LedgerEvent.objects.filter(kind="memory.published").order_by("id"))
    since = events[10].created_at.replace(microsecond=0)
    until = timezone.now() + timedelta(hours=1)
    query = urlencode(
        {
            "since": since.strftime("%Y-%m-%dT%H:%M:%S"),
            "until": until.strftime("%Y-%m-%dT%H:%M:%S"),
        }
    )
    text = client.get(f"/ledger/?{query}").text
    href = _links(text, "ledger")["JSON Lines"]
    assert _query(href)["since"] == [since.strftime("%Y-%m-%dT%H:%M:%S")]
    shown = _page_ids(client, f"/ledger/?{query}", "event")
    assert sorted(r["id"] for r in _exported(client, href)) == sorted(shown)


def test_an_unfiltered_ledger_links_the_whole_export(client, users, many):
    text = login(client, users.auditor).get("/ledger/").text
    assert _links(text, "ledger") == {
        "CSV": "/exports/ledger.csv",
        "JSON Lines": "/exports/ledger.jsonl",
    }


def test_the_htmx_fragment_carries_the_links_too(client, users, many):
    login(client, users.auditor)
    response = client.get("/ledger/?kind=memory.published", headers={"HX-Request": "true"})
    assert response.text.lstrip().startswith('<section id="ledger-rows"')
    assert _query(_links(response.text, "ledger")["CSV"]) == {"kind": ["memory.published"]}


def test_filters_an_export_would_refuse_say_why_instead_of_a_link(client, users, many):
    text = login(client, users.auditor).get("/ledger/?kind=memory.publish").text
    assert _links(text, "ledger") == {}
    assert "No export of these filters" in text and "did you mean memory.published?" in text


# --- the access log ----------------------------------------------------------------------------


@pytest.fixture
def refusals(org, many):
    for _ in range(PAGE + 5):
        access_log.record(org.globex_agent, "remember", 404, actor_ref="acme/u1")
    access_log.record(org.globex_agent, "remember", 403, actor_ref="acme/u1")
    access_log.record(org.acme_agent, "remember", 404, actor_ref="acme/u2")


def test_the_access_log_links_its_export_with_its_filters_and_every_page(client, users, refusals):
    login(client, users.auditor)
    path = "/access/?actor=u1&outcome=404&refused=on"
    text = client.get(path).text
    links = _links(text, "access")
    assert set(links) == {"CSV", "JSON Lines"}
    assert _query(links["CSV"]) == {"actor": ["acme/u1"], "outcome": ["404"], "refused": ["on"]}
    shown = _page_ids(client, path, "access")
    assert len(shown) == PAGE + 5
    exported = _exported(client, links["JSON Lines"])
    assert sorted(r["id"] for r in exported) == sorted(shown)
    assert sorted(shown) == sorted(
        AccessLog.objects.filter(actor_ref="acme/u1", outcome=404).values_list("id", flat=True)
    )


# --- attribution -------------------------------------------------------------------------------


@pytest.fixture
def taught(org):
    agent = org.acme_agent
    transcripts.record_message(org.u1, "t-1", "user", "hours CET", principal=agent, run_id="run-1")
    writes.remember(org.u1, "tz", "works in CET", principal=agent, run_id="run-1", thread_id="t-1")
    turns.resolve_turn(org.u1, "run-2", principal=agent, thread_id="t-1", query="time")
    turns.resolve_turn(org.u1, "run-3", principal=agent, thread_id="t-1", query="time")


def _attribution_link(text: str) -> str:
    return unescape(re.search(r'<a href="(/exports/attribution\.jsonl[^"]*)" download>', text)[1])


def test_attribution_links_its_bundle_with_the_query(client, users, taught):
    login(client, users.auditor)
    text = client.get("/attribution/?" + urlencode({"run": "run-2", "actor": "u1"})).text
    href = _attribution_link(text)
    assert _query(href) == {"run": ["run-2"], "actor": ["acme/u1"]}
    shown = re.findall(r'<code class="line">(.*?)</code>', text)
    lines = [r for r in _exported(client, href) if r["type"] == "line"]
    assert [unescape(t) for t in shown] == [r["text"] for r in lines]


def test_attribution_by_a_relative_line_links_the_qualified_line(client, users, taught):
    login(client, users.auditor)
    text = client.get("/attribution/?" + urlencode({"line": "[actor:u1] tz: works in CET"})).text
    href = _attribution_link(text)
    assert _query(href) == {"line": ["[actor:acme/u1] tz: works in CET"]}
    lines = [r for r in _exported(client, href) if r["type"] == "line"]
    assert {r["run_id"] for r in lines} == {"run-2", "run-3"}


def test_an_ambiguous_query_gets_no_link_but_why(client, users, taught):
    text = login(client, users.su).get("/attribution/?run=run-2&actor=u1").text
    assert "/exports/attribution.jsonl" not in text
    assert "No export of this query" in text
