"""The garden pages: who sees which proposal, approve / dismiss / bulk approve from the
console with their refusals, the dashboard's card, and that agents have no way in."""

import re

import pytest

from memory_core import actors, writes
from memory_core.garden import passes
from memory_core.models import AccessLog, LedgerEvent, Memory, Proposal

URL = "/garden/"


@pytest.fixture(autouse=True)
def thresholds(settings):
    settings.GARDEN_MIN_ACTORS = 3
    settings.MEMORY_EMBEDDER = "none"


@pytest.fixture
def garden(org, users):
    """An acme promotion at team:acme/ops (u1, u3, u4) and a globex merge at x9."""
    team = [org.u1] + [
        actors.put_actor(r, r, ["team:acme/ops", "tenant:acme"], org.acme_key, org.acme_agent)
        for r in ("u3", "u4")
    ]
    copies = [
        writes.remember(a, "tz", "Works in the <b>Berlin</b> time zone", principal=org.acme_agent)
        for a in team
    ]
    writes.remember(org.x9, "a", "Likes cats", principal=org.globex_agent)
    writes.remember(org.x9, "b", "likes cats!", principal=org.globex_agent)
    passes.run_pass()

    class G:
        pass

    g = G()
    g.copies = [w.memory for w in copies]
    g.promote = Proposal.objects.get(kind="promote", scope=org.ops)
    g.merge = Proposal.objects.get(kind="merge")
    return g


def _uids(response) -> set[str]:
    return set(re.findall(r'id="proposal-(prop_[0-9A-Z]+)"', response.text))


def test_anonymous_is_sent_to_login(client, garden):
    assert client.get(URL).status_code == 302
    response = client.post(f"/garden/{garden.promote.uid}/approve/")
    assert response.status_code == 302 and "/login/" in response["Location"]
    garden.promote.refresh_from_db()
    assert garden.promote.state == "open"


def test_superuser_sees_every_tenants_proposals(client, users, garden):
    client.force_login(users.su)
    response = client.get(URL)
    assert response.status_code == 200
    assert {garden.promote.uid, garden.merge.uid} <= _uids(response)


def test_acme_admin_sees_acme_only_and_escaped_text(client, users, garden):
    client.force_login(users.owner)
    response = client.get(URL)
    uids = _uids(response)
    assert garden.promote.uid in uids and garden.merge.uid not in uids
    assert "&lt;b&gt;Berlin&lt;/b&gt;" in response.text and "<b>Berlin" not in response.text
    assert 'name="ids"' in response.text  # may bulk approve


def test_a_proposal_outside_the_grants_is_404(client, users, garden):
    client.force_login(users.owner)
    assert client.get(f"/garden/{garden.merge.uid}/").status_code == 404
    assert client.get("/garden/prop_NOPE/").status_code == 404
    response = client.post(f"/garden/{garden.merge.uid}/approve/")
    assert response.status_code == 404
    garden.merge.refresh_from_db()
    assert garden.merge.state == "open"


def test_evidence_outside_the_grants_hides_the_proposal(client, users, org, garden, operator):
    """An admin of team:acme/ops alone reads u1, u3 and u4 (members) but a shadowed review
    of a value at tenant:acme reaches beyond: it is not shown to them."""
    from django.contrib.auth import get_user_model

    from memory_core.accounts.grants import grant

    get_user_model().objects.create_user("opsadmin", "o@x.test", "pw-ops-12345")
    grant("opsadmin", org.ops, "admin", principal=operator)
    writes.publish(org.acme, "tz", "UTC everywhere", principal=operator)
    passes.run_pass()
    review = Proposal.objects.get(kind="shadowed")
    client.force_login(get_user_model().objects.get(username="opsadmin"))
    assert client.get(f"/garden/{review.uid}/").status_code == 404
    assert client.get(f"/garden/{garden.promote.uid}/").status_code == 200


def test_auditor_reads_but_has_no_forms_and_is_refused(client, users, garden):
    client.force_login(users.auditor)
    page = client.get(f"/garden/{garden.promote.uid}/")
    assert page.status_code == 200 and "/approve/" not in page.text
    assert 'name="ids"' not in client.get(URL).text
    response = client.post(f"/garden/{garden.promote.uid}/approve/")
    assert response.status_code == 403
    garden.promote.refresh_from_db()
    assert garden.promote.state == "open"
    assert AccessLog.objects.filter(
        action="proposal.approve", outcome=403, principal="user:auditor"
    ).exists()


def test_get_on_an_action_address_goes_to_the_proposal(client, users, garden):
    client.force_login(users.owner)
    response = client.get(f"/garden/{garden.promote.uid}/approve/")
    assert response.status_code == 303
    assert response["Location"] == f"/garden/{garden.promote.uid}/"


def test_admin_approves_a_promotion_from_the_console(client, users, org, garden):
    client.force_login(users.owner)
    response = client.post(
        f"/garden/{garden.promote.uid}/approve/", {"retire_copies": "on"}, follow=True
    )
    assert response.status_code == 200 and "Approved" in response.text
    published = Memory.objects.get(scope=org.ops, key="tz", retired_at=None)
    assert published.author == "human" and published.origin_user == "owner"
    assert not Memory.objects.filter(pk__in=[c.pk for c in garden.copies], retired_at=None)
    event = LedgerEvent.objects.get(kind="proposal.approved")
    assert event.payload["proposal"] == garden.promote.uid and event.principal == "user:owner"
    garden.promote.refresh_from_db()
    assert garden.promote.state == "approved"


def test_dismiss_without_reason_is_422_and_changes_nothing(client, users, garden):
    client.force_login(users.owner)
    response = client.post(f"/garden/{garden.promote.uid}/dismiss/", {"reason": ""})
    assert response.status_code == 422
    assert "say why" in response.text
    garden.promote.refresh_from_db()
    assert garden.promote.state == "open"
    assert not LedgerEvent.objects.filter(kind="proposal.dismissed").exists()


def test_dismiss_with_a_reason(client, users, garden):
    client.force_login(users.owner)
    response = client.post(f"/garden/{garden.promote.uid}/dismiss/", {"reason": "personal"})
    assert response.status_code == 302
    garden.promote.refresh_from_db()
    assert garden.promote.state == "dismissed" and garden.promote.decided_by == "user:owner"
    assert LedgerEvent.objects.get(kind="proposal.dismissed").payload["reason_chars"] == 8
    page = client.get(URL, {"state": "dismissed"})
    assert garden.promote.uid in _uids(page)


def test_bulk_approve_reports_each_proposal(client, users, garden):
    client.force_login(users.owner)
    response = client.post(
        "/garden/approve/", {"ids": [garden.promote.uid, garden.merge.uid]}, follow=True
    )
    assert response.status_code == 200
    assert "Approved 1 of 2" in response.text and "not found" in response.text
    garden.promote.refresh_from_db()
    garden.merge.refresh_from_db()
    assert garden.promote.state == "approved" and garden.merge.state == "open"
    assert LedgerEvent.objects.get(kind="proposal.approved").payload["bulk"].startswith("bulk_")


def test_bulk_approve_with_nothing_selected_is_422(client, users, garden):
    client.force_login(users.owner)
    assert client.post("/garden/approve/", {}).status_code == 422


def test_dashboard_shows_open_proposals_per_kind_and_health(client, users, garden):
    client.force_login(users.owner)
    response = client.get("/")
    assert response.status_code == 200
    assert 'id="chart-garden"' in response.text
    # One promotion, at team:acme/ops (the three actors' narrowest common scope), not also
    # at tenant:acme.
    assert re.search(r'id="chart-garden"[^>]*data-total="1"', response.text)
    assert 'id="garden-health"' in response.text and "never shown" in response.text


def _health_line(response) -> str:
    return re.search(r"Measured <time[^>]*>[^<]*</time>: ([^.]*)\.", response.text).group(1)


def test_the_dashboards_health_report_follows_each_pass(client, users, org, garden):
    client.force_login(users.owner)
    before = _health_line(client.get("/"))
    assert before == _health_line(client.get("/"))  # the kept report, the same
    writes.remember(org.u1, "pet", "has a cat", principal=org.acme_agent)
    passes.run_pass()  # one more live memory that no turn showed
    after = _health_line(client.get("/"))
    assert after != before
    never, live = map(int, re.match(r"(\d+) of (\d+) live", after).groups())
    assert (never, live) == tuple(
        n + 1 for n in map(int, re.match(r"(\d+) of (\d+)", before).groups())
    )
    # Another reach has its own report: the superuser's counts every tenant.
    client.force_login(users.su)
    assert int(re.match(r"\d+ of (\d+)", _health_line(client.get("/"))).group(1)) > live


def test_nav_links_to_the_garden(client, users, garden):
    client.force_login(users.owner)
    assert 'href="/garden/"' in client.get("/").text


def test_agents_have_no_way_to_proposals(client, org, garden):
    from tests.helpers import bearer

    for path in ("/api/v1/garden", "/api/v1/garden/", "/api/v1/proposals"):
        assert client.get(path, headers=bearer(org.acme_secret)).status_code == 404
    from memory_console.api import api

    routes = [str(pattern.pattern) for pattern in api.urls[0]]
    assert routes and not any("garden" in r or "proposal" in r for r in routes)


def test_reading_the_garden_is_logged_with_ids_only(client, users, garden):
    client.force_login(users.owner)
    client.get(URL)
    row = AccessLog.objects.get(action="garden.read", principal="user:owner")
    assert set(row.memory_ids) == {c.uid for c in garden.copies}
    assert "Berlin" not in str(row.detail)


def test_a_shadowed_correction_without_text_is_422(client, users, org, garden):
    writes.publish(org.acme, "tz", "UTC everywhere", principal=users.p_owner)
    passes.run_pass()
    review = Proposal.objects.get(kind="shadowed")
    client.force_login(users.owner)
    response = client.post(f"/garden/{review.uid}/approve/", {"resolution": "correct", "text": ""})
    assert response.status_code == 422
    review.refresh_from_db()
    assert review.state == "open"
    assert Memory.objects.get(scope=org.acme, key="tz", retired_at=None).text == "UTC everywhere"
    response = client.post(
        f"/garden/{review.uid}/approve/", {"resolution": "correct", "text": "CET"}
    )
    assert response.status_code == 302
    assert Memory.objects.get(scope=org.acme, key="tz", retired_at=None).text == "CET"


def test_the_list_cuts_long_evidence_and_pages_a_kind(client, users, org, settings):
    from memory_console.console.garden import reads as garden_view

    # A promotion at team:acme/ops held by seven actors: more evidence than a card shows.
    team = [org.u1] + [
        actors.put_actor(r, r, ["team:acme/ops", "tenant:acme"], org.acme_key, org.acme_agent)
        for r in ("u3", "u4", "u5", "u6", "u7", "u8")
    ]
    for actor in team:
        writes.remember(actor, "tz", "Works in the Berlin time zone", principal=org.acme_agent)
    passes.run_pass()
    promote = Proposal.objects.get(kind="promote", scope=org.ops)
    client.force_login(users.su)
    text = client.get(URL).text
    card = re.search(rf'id="proposal-{promote.uid}".*?</article>', text, re.S).group(0)
    assert "7 actors' agents concluded it" in card
    assert card.count("<tr") - 1 == garden_view.EVIDENCE_SHOWN  # the header row aside
    assert f"The first {garden_view.EVIDENCE_SHOWN} of 7 pieces of evidence" in card
    detail = client.get(f"/garden/{promote.uid}/").text
    assert detail.count('class="mono" href="/memories/') == 7

    # With a kind chosen, its proposals page by PER_KIND.
    settings.GARDEN_MIN_ACTORS = 2
    for actor in team[:2]:
        writes.remember(actor, "lang", "Speaks German", principal=org.acme_agent)
    passes.run_pass()
    promotions = Proposal.objects.filter(kind="promote", state="open").count()
    assert promotions >= 2
    garden_view_per_kind = garden_view.PER_KIND
    try:
        garden_view.PER_KIND = 1
        first = client.get(URL, {"kind": "promote"})
        assert len(_uids(first)) == 1 and f"page 1 of {promotions}" in first.text
        last = client.get(URL, {"kind": "promote", "page": 99})
        assert len(_uids(last)) == 1 and f"page {promotions} of {promotions}" in last.text
        assert _uids(first) != _uids(last)
    finally:
        garden_view.PER_KIND = garden_view_per_kind


# --- a promotion over a live value ------------------------------------------------------

POLICY = "quote prices in US dollars <b>only</b>"


@pytest.fixture
def currency(org, users, operator):
    """Agents for u1-u4 concluded "euros" (u2 is in no team: the proposal is at the
    tenant); alice, a person, states dollars at tenant:acme, tagged finance."""
    from django.contrib.auth import get_user_model

    from memory_core.accounts.grants import grant
    from memory_core.accounts.principals import Principal

    alice = get_user_model().objects.create_user("alice", "al@x.test", "pw-alice-123")
    grant("alice", org.acme, "admin", principal=operator)
    policy = writes.publish(
        org.acme, "currency", POLICY, principal=Principal.for_user(alice), tags=["finance"]
    )
    team = [
        actors.put_actor(r, r, ["team:acme/ops", "tenant:acme"], org.acme_key, org.acme_agent)
        for r in ("u3", "u4")
    ]
    for actor in (org.u1, org.u2, *team):
        writes.remember(actor, "currency", "quote prices in euros", principal=org.acme_agent)
    passes.run_pass()

    class C:
        pass

    c = C()
    c.policy = policy
    c.promote = Proposal.objects.get(kind="promote", state="open", scope=org.acme)
    c.review = Proposal.objects.get(kind="shadowed", state="open")
    return c


def _card(text: str, uid: str) -> str:
    return re.search(rf'id="proposal-{uid}".*?</article>', text, re.S).group(0)


def test_a_promotion_card_shows_the_live_value_it_would_replace_and_the_review(
    client, users, currency
):
    client.force_login(users.owner)
    listed = _card(client.get(URL).text, currency.promote.uid)
    detail = client.get(f"/garden/{currency.promote.uid}/").text
    for page in (listed, detail):
        landing = re.search(r'class="landing".*?</div>', page, re.S).group(0)
        assert "already has a value for" in landing
        assert "quote prices in US dollars &lt;b&gt;only&lt;/b&gt;" in landing
        assert "<b>only" not in page
        assert f'href="/memories/{currency.policy.uid}/"' in landing
        assert re.search(r"badge-human.*person</span> alice", landing)
        assert '<span class="tag">finance</span>' in landing
        assert "the new value is tagged" in landing  # what happens to its tags
        assert f'href="/garden/{currency.review.uid}/"' in landing  # the contradicting review
    assert "on <a" in listed and "a bulk approval refuses it" in listed
    box = re.search(r'<input type="checkbox" name="replace"[^>]*>', detail).group(0)
    assert f'value="{currency.policy.uid}"' in box and "checked" not in box
    assert "replace the current value" in detail


def test_a_promotion_card_says_when_no_value_would_be_replaced(client, users, garden):
    client.force_login(users.owner)
    detail = client.get(f"/garden/{garden.promote.uid}/").text
    assert "Nothing is published at team:acme/ops for this key" in detail
    assert 'name="replace"' not in detail


def test_a_plain_approve_over_a_live_value_is_422_and_changes_nothing(client, users, org, currency):
    client.force_login(users.owner)
    for sent in ({}, {"replace": "mem_NOT_THE_LIVE_ONE"}):
        response = client.post(f"/garden/{currency.promote.uid}/approve/", sent)
        assert response.status_code == 422
        assert 'role="alert"' in response.text and currency.policy.uid in response.text
        assert f'id="approve-{currency.promote.uid}"' in response.text  # the page stays
    assert "already holds a value" in client.post(f"/garden/{currency.promote.uid}/approve/").text
    versions = Memory.objects.filter(scope=org.acme, key="currency")
    assert [(m.uid, m.retired_at) for m in versions] == [(currency.policy.uid, None)]
    currency.promote.refresh_from_db()
    assert currency.promote.state == "open"
    assert not LedgerEvent.objects.filter(kind__in=["proposal.approved", "memory.promoted"])
    refused = AccessLog.objects.filter(action="proposal.approve", principal="user:owner")
    assert [row.outcome for row in refused] == [422, 422, 422]
    assert "dollars" not in str([row.detail for row in refused])


def test_approving_with_replace_supersedes_the_value_and_keeps_its_tags(
    client, users, org, currency
):
    client.force_login(users.owner)
    response = client.post(
        f"/garden/{currency.promote.uid}/approve/", {"replace": currency.policy.uid}
    )
    assert response.status_code == 302
    live = Memory.objects.get(scope=org.acme, key="currency", retired_at=None)
    assert (live.text, live.author, live.origin_user) == ("quote prices in euros", "human", "owner")
    assert live.tags == ["finance"] and live.supersedes_id == currency.policy.id
    currency.policy.refresh_from_db()
    assert currency.policy.retired_reason == "superseded"
    assert Memory.objects.filter(scope=org.acme, key="currency").count() == 2
    event = LedgerEvent.objects.get(kind="proposal.approved")
    assert event.payload["supersedes"] == currency.policy.uid
    assert currency.policy.uid in event.payload["retired"]
    currency.promote.refresh_from_db()
    assert currency.promote.state == "approved"
    assert "Approved" in client.get(response["Location"]).text


def test_bulk_approve_refuses_a_promotion_over_a_live_value(client, users, org, currency):
    client.force_login(users.owner)
    response = client.post("/garden/approve/", {"ids": [currency.promote.uid]}, follow=True)
    assert "Approved 0 of 1" in response.text and "already holds a value" in response.text
    assert Memory.objects.filter(scope=org.acme, key="currency").count() == 1
    currency.promote.refresh_from_db()
    assert currency.promote.state == "open"
