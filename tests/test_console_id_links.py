"""Links to host-chosen ids stay inside their page whatever the id holds.

Run and thread ids are the host's own strings; pasted into a path, `../../ledger/verify`
would make the browser open another page. Each link is resolved here as a browser would
(RFC 3986 dot-segment removal) and must land on the page for that id.
"""

import re
from html import unescape
from urllib.parse import urljoin, urlsplit

import pytest

from memory_core import transcripts, turns, writes

HOSTILE = ["../../ledger/verify", "../../keys", "..", ".", "a/../../b", "%2e%2e", "x?y#z"]


def _hrefs(text: str) -> list[str]:
    return [unescape(h) for h in re.findall(r'href="([^"]+)"', text)]


def _resolved(href: str, base: str = "http://testserver/runs/") -> str:
    return urlsplit(urljoin(base, href)).path


@pytest.mark.parametrize("run_id", HOSTILE)
def test_a_run_link_stays_on_the_run_page_whatever_the_run_id(client, users, org, run_id):
    writes.remember(org.u1, "tz", "works in CET", principal=org.acme_agent)
    turns.resolve_turn(org.u1, run_id, principal=org.acme_agent, thread_id=run_id)
    transcripts.record_message(
        org.u1, run_id, "user", "hi", principal=org.acme_agent, run_id=run_id
    )
    client.force_login(users.auditor)
    text = client.get("/runs/").text
    runs = [
        h for h in _hrefs(text) if h.startswith("/runs/acme/") or h.startswith("/attribution/?run=")
    ]
    threads = [h for h in _hrefs(text) if h.startswith("/threads/")]
    assert runs, text
    for href in runs:
        path = _resolved(href)
        assert path.startswith("/runs/acme/u1/") or path == "/attribution/", href
        page = client.get(href)
        assert page.status_code == 200 and "- [actor:acme/u1] tz: works in CET" in page.text
    for href in threads:
        assert _resolved(href).startswith("/threads/"), href
        assert client.get(href).status_code == 200


def test_dot_segment_ids_are_linked_through_pages_that_take_them_as_parameters(client, users, org):
    turns.resolve_turn(org.u1, "..", principal=org.acme_agent, thread_id="..")
    client.force_login(users.auditor)
    text = client.get("/runs/").text
    assert 'href="/attribution/?run=.."' in text
    assert 'href="/threads/../' not in text and 'href="/runs/acme/u1/../"' not in text
