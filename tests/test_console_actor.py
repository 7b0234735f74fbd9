"""The actor page: who may open it, what applies to the actor, and the block preview."""

import re

import pytest
from django.utils.html import escape

from memory_console.console.common.access import actor_for_reader
from memory_core import turns, writes
from memory_core.errors import NotFound
from memory_core.models import AccessLog, Digest


def _page(client, user, ref="acme/u1", **params):
    client.force_login(user)
    return client.get(f"/actors/{ref}/", params)


def _fragment(client, user, ref="acme/u1", **params):
    client.force_login(user)
    return client.get(f"/actors/{ref}/", params, HTTP_HX_REQUEST="true")


@pytest.fixture
def units(users, org, operator):
    """`units` at three scopes of u1's chain: the agent's note wins over two people's."""
    return (
        writes.remember(org.u1, "units", "uses leagues", principal=org.acme_agent).memory,
        writes.publish(org.acme, "units", "report in miles", principal=users.p_owner),
        writes.publish(org.root, "units", "report in kilometres", principal=operator),
    )


# --- who gets in -----------------------------------------------------------------------


def test_actor_for_reader_is_404_for_unknown_and_unreachable_actors(users, org):
    assert actor_for_reader(users.auditor, "acme/u1") == org.u1
    assert actor_for_reader(users.outsider, "globex/x9") == org.x9
    for user, ref in (
        (users.outsider, "acme/u1"),
        (users.owner, "globex/x9"),
        (users.su, "nobody"),
    ):
        with pytest.raises(NotFound):
            actor_for_reader(user, ref)


@pytest.mark.parametrize("who", ["su", "owner", "auditor"])
def test_readers_open_the_actor_page_and_it_is_logged(client, users, org, units, who):
    response = _page(client, getattr(users, who))
    assert response.status_code == 200
    assert "uses leagues" in response.text
    principal = f"user:{getattr(users, who).get_username()}"
    read = AccessLog.objects.get(action="actor.read", principal=principal)
    assert read.channel == "console" and read.outcome == 200 and read.actor_ref == "acme/u1"
    assert set(read.memory_ids) == {m.uid for m in units}
    assert AccessLog.objects.filter(
        action="preview", principal=principal, actor_ref="acme/u1"
    ).exists()


@pytest.mark.parametrize("ref", ["acme/u1", "acme/u2", "nobody"])
def test_outsider_gets_404_and_nothing_is_read(client, users, org, units, ref):
    response = _page(client, users.outsider, ref)
    assert response.status_code == 404
    assert "uses leagues" not in response.text and "units" not in response.text
    # Nothing read, the refusal logged (tests/test_console_refusals_logged.py).
    rows = AccessLog.objects.filter(action__in=["actor.read", "preview"])
    assert [(r.action, r.outcome, r.actor_ref) for r in rows] == [("actor.read", 404, ref)]


def test_owner_gets_404_on_another_tenants_actor(client, users, org):
    assert _page(client, users.owner, "globex/x9").status_code == 404
    assert _page(client, users.outsider, "globex/x9").status_code == 200


def test_anonymous_is_sent_to_login(client, users, org):
    response = client.get("/actors/acme/u1/")
    assert response.status_code == 302
    assert response["Location"] == "/login/?next=/actors/acme/u1/"
    assert not AccessLog.objects.filter(action="preview").exists()


def test_actor_page_is_get_only(client, users, org):
    client.force_login(users.owner)
    assert client.post("/actors/acme/u1/", {"q": "x"}).status_code == 405


# --- what it shows ---------------------------------------------------------------------


def test_chain_is_shown_narrowest_first(client, users, org):
    text = _page(client, users.owner).text
    chain = re.search(r'<ol class="chain">(.*?)</ol>', text, re.S).group(1)
    tokens = re.findall(r'title="([^"]+)"', chain)
    assert tokens == ["actor:acme/u1", "team:acme/ops", "tenant:acme", "global"]
    # The owner reads acme's scopes, not global: that chip is not a link for them.
    assert 'href="/scopes/tenant:acme/"' in chain and 'href="/scopes/global/"' not in chain


def test_memories_are_precedence_resolved_with_overrides_under_the_winner(
    client, users, org, units
):
    learned, acme, root = units
    text = _page(client, users.owner).text
    applied = re.search(r'<section class="card" id="applies">(.*?)</section>', text, re.S)
    rows = re.findall(r'<tr class="(winner|overridden)">(.*?)</tr>', applied.group(1), re.S)
    values = [(kind, re.search(r"uses leagues|report in \w+", row).group(0)) for kind, row in rows]
    assert values == [
        ("winner", "uses leagues"),
        ("overridden", "report in miles"),
        ("overridden", "report in kilometres"),
    ]
    assert f'href="/memories/{learned.uid}/"' in text
    assert f'href="/memories/{acme.uid}/"' in text
    # Global is outside the owner's grant: shown (it is in u1's prompt) but not linked.
    assert f'href="/memories/{root.uid}/"' not in text
    assert f'href="/memories/{root.uid}/"' in _page(client, users.su).text
    assert "badge-agent" in applied.group(1) and "badge-human" in applied.group(1)


def test_an_actors_conflict_shows_both_values(client, users, org, units):
    text = _page(client, users.auditor).text
    section = re.search(r'<section class="card" id="conflicts">(.*?)</section>', text, re.S)
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", section.group(1), re.S)[1:]
    assert len(rows) == 2
    assert "uses leagues" in rows[0] and "report in miles" in rows[0]
    assert "uses leagues" in rows[1] and "report in kilometres" in rows[1]
    assert "agent over person" in rows[0]


def test_recent_turns_are_listed_newest_first_with_run_links(client, users, org, units):
    turns.resolve_turn(org.u1, "run-a", principal=org.acme_agent, query="distances")
    turns.resolve_turn(org.u1, "run-b", principal=org.acme_agent)
    turns.resolve_turn(org.u2, "run-c", principal=org.acme_agent)
    text = _page(client, users.auditor).text
    runs = re.findall(r'href="/runs/acme/u1/([^/"]+)/"', text)
    assert runs == ["run-b", "run-a"]
    assert "run-c" not in text
    assert "distances" in text


def test_actor_refs_elsewhere_link_to_the_actor_page(client, users, org, units):
    client.force_login(users.owner)
    assert 'for <a href="/actors/acme/u1/">acme/u1</a>' in client.get("/scopes/actor:acme/u1/").text
    assert 'href="/actors/acme/u1/">User One</a>' in client.get("/scopes/").text


# --- block preview ---------------------------------------------------------------------


@pytest.mark.parametrize("query", [None, "distance units"])
def test_block_preview_is_exactly_preview_turns_block_and_stores_no_digest(
    client, users, org, units, query
):
    writes.publish(org.ops, "standup", "daily at 09:30", principal=users.p_owner)
    expected = turns.preview_turn(org.u1, principal=users.p_owner, query=query)
    digests = Digest.objects.count()
    params = {"q": query} if query else {}
    text = _page(client, users.owner, **params).text
    assert expected.block
    assert f'<pre class="block">{escape(expected.block)}</pre>' in text
    for name in ("offered", "omitted", "pinned omitted", "recalled", "prompt chars", "partial"):
        assert f"<dt>{name}</dt>" in text
    assert f"<dd>{expected.stats['prompt_chars']}</dd>" in text
    # Each line links to its memory version, unless that lies outside the owner's grant.
    linked = {line["memory_id"] for line in expected.lines} - {units[2].uid}
    assert linked and all(f'href="/memories/{uid}/"' in text for uid in linked)
    assert f'href="/memories/{units[2].uid}/"' not in text
    assert Digest.objects.count() == digests


def test_block_preview_as_an_htmx_fragment_logs_only_the_preview(client, users, org, units):
    expected = turns.preview_turn(org.u1, principal=users.p_owner, query="units")
    last = AccessLog.objects.order_by("-id").values_list("id", flat=True).first()
    response = _fragment(client, users.owner, q="units")
    assert response.status_code == 200
    assert "HX-Request" in response["Vary"]
    assert 'id="block-preview"' in response.text
    assert "<html" not in response.text and 'id="applies"' not in response.text
    assert escape(expected.block) in response.text
    rows = list(AccessLog.objects.filter(id__gt=last))
    assert [(row.action, row.channel, row.principal) for row in rows] == [
        ("preview", "console", "user:owner")
    ]
    assert not Digest.objects.exists()


def test_a_query_that_cannot_be_stored_is_refused_before_the_preview(client, users, org):
    # A NUL never reaches the view (console/parameters.py): a 400 naming it.
    response = _page(client, users.owner, q="bad\x00query")
    assert response.status_code == 400
    assert "NUL" in response.text
    assert not Digest.objects.exists()


def test_an_actor_with_no_memories_says_its_agent_gets_no_block(client, users, org):
    text = _page(client, users.owner, "acme/u2").text
    assert "gets no block at all" in text


# --- hostile text ----------------------------------------------------------------------


def test_memory_text_is_escaped_in_the_listing_conflicts_and_preview(client, users, org):
    writes.publish(org.acme, "xss", "a plain policy", principal=users.p_owner)
    writes.remember(org.u1, "xss", "<script>alert(1)</script>", principal=org.acme_agent)
    text = _page(client, users.owner, q="<script>").text
    assert text.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 3  # listing, conflict, block
    assert "<script>alert" not in text
    # htmx and the console's own focus script (base.html), and nothing else.
    assert text.count("<script") == text.count('<script src="/static/') == 2


# --- paging (~540 keys made a 350 KiB page) ---------------------------------


@pytest.fixture
def many(users, org, monkeypatch):
    """Seven keys at u1's scope (three conflicting with acme's), pages of three."""
    from memory_console.console.actors import reads as actors

    monkeypatch.setattr(actors, "APPLIED_PAGE", 3)
    monkeypatch.setattr(actors, "CONFLICTS_PAGE", 2)
    for n in range(7):
        writes.remember(org.u1, f"k{n}", f"note {n}", principal=org.acme_agent)
    for n in range(3):
        writes.publish(org.acme, f"k{n}", f"policy {n}", principal=users.p_owner)


def _section(text, name):
    return re.search(rf'<section class="card" id="{name}">(.*?)</section>', text, re.S).group(1)


def test_the_applied_set_is_paged_with_links_that_work_without_javascript(client, users, org, many):
    first = _page(client, users.owner)
    applies = _section(first.text, "applies")
    assert "7 keys" in applies and "page 1 of 3" in applies
    assert len(re.findall(r'<tr class="winner">', applies)) == 3
    link = re.search(r'href="(/actors/acme/u1/\?keys=2#applies)"', applies)
    assert link and 'hx-target="#applies"' in applies
    second = client.get(link.group(1).split("#")[0])
    assert second.status_code == 200 and "page 2 of 3" in _section(second.text, "applies")
    # The whole page still comes with it: the preview, the conflicts, the turns.
    assert 'id="block-preview"' in second.text and 'id="conflicts"' in second.text
    last = _section(client.get("/actors/acme/u1/", {"keys": 3}).text, "applies")
    assert len(re.findall(r'<tr class="winner">', last)) == 1 and 'rel="next"' not in last
    # A page past the end shows the last one, as the other paged lists do.
    assert "page 3 of 3" in _section(client.get("/actors/acme/u1/?keys=99").text, "applies")


def test_a_pager_link_over_htmx_gets_its_section_alone_and_logs_what_it_shows(
    client, users, org, many
):
    client.force_login(users.owner)
    before = Digest.objects.count(), AccessLog.objects.filter(action="preview").count()
    response = client.get(
        "/actors/acme/u1/", {"keys": 2}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="applies"
    )
    assert response.status_code == 200 and "<html" not in response.text
    assert response.text.lstrip().startswith('<section class="card" id="applies">')
    assert 'id="block-preview"' not in response.text and 'id="conflicts"' not in response.text
    assert "page 2 of 3" in response.text
    # No preview is composed for a page of keys; the read is logged with the shown ids.
    assert (Digest.objects.count(), AccessLog.objects.filter(action="preview").count()) == before
    read = AccessLog.objects.filter(action="actor.read").latest("id")
    shown = re.findall(r'href="/memories/(mem_[^/]+)/"', response.text)
    assert shown and set(shown) <= set(read.memory_ids) and read.count == 7
    conflicts = client.get(
        "/actors/acme/u1/", {"conflicts": 2}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="conflicts"
    )
    assert conflicts.text.lstrip().startswith('<section class="card" id="conflicts">')
    assert "3 key values" in conflicts.text and "page 2 of 2" in conflicts.text
    assert len(re.findall(r"<tr[^>]*>", conflicts.text)) == 2  # the head and one conflict


def test_paging_keeps_privacy_outsiders_get_404_on_every_page(client, users, org, many):
    client.force_login(users.outsider)
    for params in ({"keys": 2}, {"conflicts": 2}):
        assert client.get("/actors/acme/u1/", params).status_code == 404
        assert (
            client.get(
                "/actors/acme/u1/", params, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="applies"
            ).status_code
            == 404
        )
    assert not AccessLog.objects.filter(action="actor.read", outcome=200).exists()
