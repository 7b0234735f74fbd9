"""The conflicts page: who sees which pairs, order, filters, paging, and the inline actions."""

import re

import pytest

from memory_core import writes
from memory_core.models import AccessLog, LedgerEvent, Memory


def _get(client, user, **params):
    client.force_login(user)
    return client.get("/conflicts/", params)


def _rows(response) -> list[str]:
    body = re.search(r"<tbody>(.*?)</tbody>", response.text, re.S)
    return re.findall(r"<tr[^>]*>(.*?)</tr>", body.group(1), re.S) if body else []


@pytest.fixture
def pairs(users, org, operator):
    """Three conflicts in acme (one agent over a person, two people over people) and one
    in globex."""

    class Pairs:
        pass

    p = Pairs()
    p.tone_brief = writes.remember(org.u1, "tone", "brief", principal=org.acme_agent).memory
    p.tone_formal = writes.publish(org.acme, "tone", "formal", principal=users.p_owner)
    p.units_km = writes.publish(org.root, "units", "kilometres", principal=operator)
    p.units_miles = writes.publish(org.acme, "units", "miles", principal=users.p_owner)
    p.globex_units = writes.remember(org.x9, "units", "leagues", principal=org.globex_agent).memory
    return p


# --- who sees what ---------------------------------------------------------------------


def test_anonymous_is_sent_to_login(client, users):
    response = client.get("/conflicts/")
    assert response.status_code == 302
    assert response["Location"] == "/login/?next=/conflicts/"
    assert not AccessLog.objects.filter(action="conflicts.read").exists()


def test_superuser_sees_every_tenants_conflicts(client, users, pairs):
    text = _get(client, users.su).text
    assert "brief" in text and "miles" in text and "leagues" in text
    assert "3 conflicts" in text


@pytest.mark.parametrize("who", ["owner", "auditor"])
def test_acme_readers_see_acme_pairs_only(client, users, pairs, who):
    response = _get(client, getattr(users, who))
    assert response.status_code == 200
    assert "brief" in response.text and "miles" in response.text
    assert "leagues" not in response.text
    assert "2 conflicts" in response.text


def test_outsider_sees_their_tenant_and_none_of_acmes(client, users, pairs):
    response = _get(client, users.outsider)
    assert response.status_code == 200
    assert "leagues" in response.text
    for acme_value in ("brief", "formal", "miles"):
        assert acme_value not in response.text
    assert pairs.tone_brief.uid not in response.text


def test_reading_the_page_is_logged_with_the_memories_shown(client, users, pairs):
    _get(client, users.auditor)
    row = AccessLog.objects.get(action="conflicts.read")
    assert row.channel == "console" and row.principal == "user:auditor" and row.outcome == 200
    assert row.count == 2
    expected = {pairs.tone_brief, pairs.tone_formal, pairs.units_miles, pairs.units_km}
    assert set(row.memory_ids) == {m.uid for m in expected}


def test_page_is_get_only(client, users):
    client.force_login(users.owner)
    assert client.post("/conflicts/").status_code == 405


# --- what it shows ---------------------------------------------------------------------


def test_agent_over_human_comes_before_human_over_human(client, users, pairs):
    rows = _rows(_get(client, users.owner))
    assert len(rows) == 2
    assert "brief" in rows[0] and "formal" in rows[0] and "agent over person" in rows[0]
    assert "miles" in rows[1] and "kilometres" in rows[1] and "person over person" in rows[1]
    # Narrower value and its scope beside the wider value and its scope, and how many actors.
    assert rows[1].index("miles") < rows[1].index("kilometres")
    assert 'title="tenant:acme"' in rows[1] and 'title="global"' in rows[1]
    assert '<td class="num" title="actors whose chain holds both values">2</td>' in rows[1]


def test_filter_by_author_combination(client, users, pairs):
    rows = _rows(_get(client, users.owner, authors="human>human"))
    assert len(rows) == 1 and "miles" in rows[0]
    rows = _rows(_get(client, users.owner, authors="agent>human"))
    assert len(rows) == 1 and "brief" in rows[0]
    assert _rows(_get(client, users.owner, authors="agent>agent")) == []


def test_filter_by_scope_matches_either_side(client, users, pairs):
    rows = _rows(_get(client, users.owner, scope="global"))
    assert len(rows) == 1 and "kilometres" in rows[0]
    rows = _rows(_get(client, users.owner, scope="actor:acme/u1"))
    assert len(rows) == 1 and "brief" in rows[0]
    assert len(_rows(_get(client, users.owner, scope="tenant:acme"))) == 2


def test_a_bad_author_filter_is_ignored(client, users, pairs):
    response = _get(client, users.owner, authors="robot>robot")
    assert response.status_code == 200
    assert len(_rows(response)) == 2


@pytest.mark.parametrize("token", ["tenant:globex", "actor:globex/x9", "tenant:nowhere"])
def test_a_scope_outside_the_grant_matches_nothing_like_an_unknown_one(client, users, pairs, token):
    response = _get(client, users.owner, scope=token)
    assert response.status_code == 200
    assert _rows(response) == []
    assert "leagues" not in response.text
    assert "No conflict matches these filters" in response.text


def test_htmx_request_gets_only_the_rows(client, users, pairs):
    client.force_login(users.owner)
    response = client.get("/conflicts/", {"authors": "agent>human"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert response.text.strip().startswith('<section id="conflict-rows"')
    assert "<html" not in response.text
    assert "brief" in response.text and "miles" not in response.text


def test_pages_of_twenty_five_and_past_the_end_is_the_last_page(client, users, org, operator):
    for i in range(26):
        writes.publish(org.root, f"k{i:02d}", "wide", principal=operator)
        writes.publish(org.acme, f"k{i:02d}", "narrow", principal=users.p_owner)
    first = _get(client, users.owner)
    assert len(_rows(first)) == 25
    assert "page 1 of 2" in first.text
    assert 'href="/conflicts/?page=2"' in first.text
    second = _get(client, users.owner, page=2)
    assert len(_rows(second)) == 1
    beyond = _get(client, users.owner, page=9)
    assert "page 2 of 2" in beyond.text and len(_rows(beyond)) == 1


# --- actions offered ---------------------------------------------------------------------


def test_auditor_is_offered_no_action(client, users, pairs):
    text = _get(client, users.auditor).text
    assert "/republish/" not in text and "/invalidate/" not in text
    assert "read only" in text


def test_owner_is_offered_republish_at_the_wider_scope_and_invalidate(client, users, pairs):
    tone = _rows(_get(client, users.owner))[0]
    row = f"/conflicts/{pairs.tone_brief.uid}/{pairs.tone_formal.uid}"
    assert f'action="{row}/republish/"' in tone
    assert '<input type="hidden" name="target" value="tenant:acme">' in tone
    assert f'action="{row}/invalidate/"' in tone
    assert 'name="next" value="/conflicts/"' in tone
    assert "leave it" in tone


def test_owner_chooses_among_the_scopes_they_administer_when_the_wider_is_not_one(
    client, users, org, operator
):
    learned = writes.remember(org.u1, "units", "leagues", principal=org.acme_agent).memory
    writes.publish(org.root, "units", "kilometres", principal=operator)
    row = _rows(_get(client, users.owner))[0]
    assert re.search(rf'action="/conflicts/{learned.uid}/mem_[0-9A-Z]+/republish/"', row)
    assert re.findall(r'<option value="([^"]+)"', row) == ["team:acme/ops", "tenant:acme"]


def test_no_republish_where_the_owner_administers_no_wider_scope(client, users, pairs):
    miles = _rows(_get(client, users.owner, authors="human>human"))[0]
    assert "/republish/" not in miles  # wider than tenant:acme is only global
    assert re.search(
        rf'action="/conflicts/{pairs.units_miles.uid}/mem_[0-9A-Z]+/invalidate/"', miles
    )
    su_row = _rows(_get(client, users.su, authors="human>human"))[0]
    assert '<input type="hidden" name="target" value="global">' in su_row


# --- acting from the page ----------------------------------------------------------------


def test_republishing_from_the_conflicts_page_lands_wider_and_comes_back(client, users, org, pairs):
    back = "/conflicts/?authors=agent%3Ehuman"
    client.force_login(users.owner)
    response = client.post(
        f"/memories/{pairs.tone_brief.uid}/republish/", {"target": "tenant:acme", "next": back}
    )
    assert response.status_code == 302 and response["Location"] == back
    new = Memory.objects.get(scope=org.acme, key="tone", retired_at=None)
    assert new.text == "brief" and new.author == "human" and new.origin_user == "owner"
    assert new.promoted_from_id == pairs.tone_brief.pk
    assert Memory.objects.get(pk=pairs.tone_formal.pk).retired_reason == "superseded"
    assert Memory.objects.get(pk=pairs.tone_brief.pk).retired_at is None
    assert LedgerEvent.objects.filter(
        kind="memory.promoted", payload__promoted_from=pairs.tone_brief.uid
    ).exists()
    landing = client.get(back)
    assert "Republished at tenant:acme" in landing.text


def test_invalidating_from_the_conflicts_page_retires_the_narrower_and_comes_back(
    client, users, pairs
):
    client.force_login(users.owner)
    response = client.post(
        f"/memories/{pairs.tone_brief.uid}/invalidate/",
        {"reason": "the team writes formally", "next": "/conflicts/"},
    )
    assert response.status_code == 302 and response["Location"] == "/conflicts/"
    brief = Memory.objects.get(pk=pairs.tone_brief.pk)
    assert brief.retired_reason == "invalidated"
    assert brief.retired_note == "the team writes formally"
    rows = _rows(client.get("/conflicts/"))
    assert len(rows) == 1 and "brief" not in rows[0]


@pytest.mark.parametrize(
    "unsafe", ["https://evil.example/conflicts/", "//evil.example/", "javascript:alert(1)"]
)
def test_an_unsafe_next_goes_to_the_memory_instead(client, users, pairs, unsafe):
    client.force_login(users.owner)
    response = client.post(f"/memories/{pairs.tone_brief.uid}/pin/", {"next": unsafe})
    assert response.status_code == 302
    assert response["Location"] == f"/memories/{pairs.tone_brief.uid}/"


def test_auditor_posting_the_pages_action_is_refused_and_changes_nothing(client, users, pairs):
    client.force_login(users.auditor)
    response = client.post(
        f"/memories/{pairs.tone_brief.uid}/republish/",
        {"target": "tenant:acme", "next": "/conflicts/"},
    )
    assert response.status_code == 403
    assert Memory.objects.filter(key="tone", promoted_from__isnull=False).count() == 0


# --- hostile text ----------------------------------------------------------------------


def test_memory_text_is_escaped(client, users, org):
    writes.publish(org.acme, "xss", "a plain policy", principal=users.p_owner)
    writes.remember(org.u1, "xss", "<script>alert(1)</script>", principal=org.acme_agent)
    text = _get(client, users.owner).text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "<script>alert" not in text
    # htmx and the console's focus script (base.html), both files; nothing inline.
    assert text.count("<script") == text.count('<script src="/static/') == 2


def test_a_filter_value_is_escaped_too(client, users, pairs):
    text = _get(client, users.owner, scope='"><script>x</script>').text
    assert "<script>x" not in text
    assert "&quot;&gt;&lt;script&gt;x&lt;/script&gt;" in text


# --- duplicates: the same value at two scopes -----------------------------------------------


@pytest.fixture
def doubled(users, org):
    """An agent's note republished at the tenant without retiring it: the same value twice."""
    note = writes.remember(org.u1, "tz", "works in CET", principal=org.acme_agent).memory
    copy = writes.promote(note, org.acme, principal=users.p_owner)
    return note, copy


def test_the_same_value_twice_is_not_listed_as_a_conflict(client, users, doubled):
    response = _get(client, users.owner)
    assert _rows(response) == []
    assert 'class="authors authors-agenthuman"' not in response.text
    assert "0 conflicts" in response.text
    assert 'href="/conflicts/?show=duplicates"' in response.text and "1 duplicate" in response.text


def test_duplicates_are_listed_apart_with_the_retire_action(client, users, doubled):
    note, copy = doubled
    response = _get(client, users.owner, show="duplicates")
    rows = _rows(response)
    assert len(rows) == 1 and "1 duplicate" in response.text
    row = rows[0]
    assert "duplicate" in row and note.uid in row and copy.uid in row
    assert f'action="/conflicts/{note.uid}/{copy.uid}/invalidate/"' in row
    assert f"the same value is held at tenant:acme ({copy.uid})" in row
    assert "Retire the narrower copy" in row and "/republish/" not in row
    assert 'name="next" value="/conflicts/?show=duplicates"' in row
    assert "0 conflicts" in response.text


def test_an_auditor_sees_duplicates_read_only(client, users, doubled):
    row = _rows(_get(client, users.auditor, show="duplicates"))[0]
    assert "/invalidate/" not in row and "read only" in row


def test_retiring_a_duplicates_narrower_copy_keeps_the_wider_value(client, users, doubled):
    note, copy = doubled
    client.force_login(users.owner)
    reason = f"duplicate: the same value is held at tenant:acme ({copy.uid})"
    response = client.post(
        f"/conflicts/{note.uid}/{copy.uid}/invalidate/",
        {"reason": reason, "next": "/conflicts/?show=duplicates"},
    )
    assert response.status_code == 302
    assert response["Location"] == "/conflicts/?show=duplicates"
    retired = Memory.objects.get(pk=note.pk)
    assert (retired.retired_reason, retired.retired_note) == ("invalidated", reason)
    assert Memory.objects.get(pk=copy.pk).retired_at is None
    assert LedgerEvent.objects.filter(kind="memory.invalidated").count() == 1
    assert _rows(client.get("/conflicts/?show=duplicates")) == []


def test_a_differing_value_stays_a_conflict_beside_a_duplicate(client, users, org, doubled):
    writes.publish(org.ops, "tz", "works in UTC", principal=users.p_owner)
    rows = _rows(_get(client, users.owner))
    assert len(rows) == 1 and "works in UTC" in rows[0]


def test_republish_offers_to_retire_the_original_by_default(client, users, pairs):
    tone = _rows(_get(client, users.owner))[0]
    assert '<input type="checkbox" name="retire_original" checked>' in tone
    page = client.get(f"/memories/{pairs.tone_brief.uid}/").text
    assert re.search(r'<input type="checkbox" name="retire_original"\s+checked>', page)
