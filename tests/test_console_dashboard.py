"""The dashboard: figures and charts within the user's grants, pinned_omitted alerts, recent
events, the chain status without re-verifying, and a cost that does not grow with history."""

import re
from datetime import date, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memory_console.console.dashboard.charts import (
    Series,
    last_days,
    nice_ceiling,
    stacked_daily_bars,
)
from memory_core import turns, writes
from memory_core.ledger import ledger
from memory_core.models import LedgerEvent
from tests.helpers import login
from tests.roles import as_owner


def _stat(response, name) -> int:
    return int(re.search(rf'id="stat-{name}">(\d+)<', response.text).group(1))


def _bars(response, chart, series) -> list[int]:
    svg = re.search(rf'<svg class="chart" id="{chart}".*?</svg>', response.text, re.S).group(0)
    return [int(v) for v in re.findall(rf'class="bar bar-{series}"[^>]*data-value="(\d+)"', svg)]


@pytest.fixture
def activity(users, org):
    """Agent and human writes and turns in both tenants."""
    writes.remember(org.u1, "tz", "works in CET", principal=org.acme_agent)  # 12 chars
    writes.remember(org.u2, "lang", "prefers French", principal=org.acme_agent)  # 14 chars
    writes.publish(org.acme, "fiscal-year", "starts in October", principal=users.p_owner)
    memory = writes.publish(org.ops, "oncall", "Mondays", principal=users.p_owner)
    writes.correct(memory, "Mondays and Thursdays", principal=users.p_owner)
    writes.remember(org.x9, "tz", "works in Pacific time", principal=org.globex_agent)  # 21
    turns.resolve_turn(org.u1, "run-1", principal=org.acme_agent)
    turns.resolve_turn(org.u2, "run-2", principal=org.acme_agent)
    turns.resolve_turn(org.x9, "run-9", principal=org.globex_agent)


# --- who gets in -------------------------------------------------------------------------


def test_anonymous_is_sent_to_login(client, users):
    response = client.get("/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_logging_in_lands_on_the_dashboard(client, users):
    response = client.post("/login/", {"username": "auditor", "password": "pw-audit-123"})
    assert response["Location"] == "/"
    page = client.get("/")
    assert page.status_code == 200 and "<h1>Dashboard</h1>" in page.text
    assert 'href="/" aria-current="page">Dashboard</a>' in page.text


# --- the figures, per reader -------------------------------------------------------------


@pytest.mark.parametrize(
    "who, agent_writes, human_writes, chars, turn_count, live, live_agent",
    [
        ("su", 3, 3, 12 + 14 + 21, 3, 5, 3),
        ("owner", 2, 3, 12 + 14, 2, 4, 2),
        ("auditor", 2, 3, 12 + 14, 2, 4, 2),
        ("outsider", 1, 0, 21, 1, 1, 1),
    ],
)
def test_figures_count_only_what_the_reader_may_read(
    client, users, activity, who, agent_writes, human_writes, chars, turn_count, live, live_agent
):
    response = login(client, getattr(users, who)).get("/")
    assert response.status_code == 200
    assert _stat(response, "agent-writes") == agent_writes
    assert _stat(response, "human-writes") == human_writes  # 2 published + 1 corrected
    assert _stat(response, "agent-chars") == chars
    assert _stat(response, "turns") == turn_count
    assert _stat(response, "live") == live
    assert f"({live_agent} by agents)" in response.text


def test_acme_readers_see_nothing_of_globex(client, users, activity):
    response = login(client, users.auditor).get("/")
    # Random tokens (the CSRF token, nonces) may spell "x9" by chance: leave them out.
    text = re.sub(r"[A-Za-z0-9+/=_-]{32,}", "", response.text)
    assert "globex" not in text and "x9" not in text
    assert "run-9" not in text and "user:outsider" not in text


def test_counts_per_scope_and_author(client, users, activity):
    response = login(client, users.owner).get("/")
    section = re.search(r"<h2>Live memories per scope</h2>.*?</section>", response.text, re.S)
    rows = {
        token: [int(n) for n in re.findall(r'<td class="num">(\d+)</td>', row)]
        for token, row in re.findall(
            r'href="/scopes/([^"]+)/".*?(<td class="num">.*?)</tr>', section.group(0), re.S
        )
    }
    # people, agents, live
    assert rows == {
        "tenant:acme": [1, 0, 1],
        "team:acme/ops": [1, 0, 1],
        "actor:acme/u1": [0, 1, 1],
        "actor:acme/u2": [0, 1, 1],
    }


def test_only_the_biggest_scopes_are_listed_and_the_totals_count_them_all(
    client, users, activity, monkeypatch
):
    from memory_console.console.dashboard import reads as dashboard

    monkeypatch.setattr(dashboard, "SCOPE_ROWS", 2)
    response = login(client, users.su).get("/")
    section = re.search(r"<h2>Live memories per scope</h2>.*?</section>", response.text, re.S)
    listed = re.findall(r'href="/scopes/([^"]+)/"', section.group(0))
    # Five scopes hold a live memory: the two listed are the first by size, then token.
    assert listed[:2] == ["actor:acme/u1", "actor:acme/u2"]
    assert "and 3 more scopes" in section.group(0)
    assert _stat(response, "live") == 5 and "(3 by agents)" in response.text


# --- charts ------------------------------------------------------------------------------


def test_the_charts_render_as_inline_svg_with_the_data(client, users, activity):
    response = login(client, users.owner).get("/")
    # Thirty columns a chart, today's last, each with its numbers in a <title>.
    svg = re.search(r'<svg class="chart" id="chart-writes".*?</svg>', response.text, re.S).group(0)
    assert svg.count('<g class="day">') == 30
    today = timezone.now().date().isoformat()
    assert f"<title>{today}: 2 by agents, 3 by people</title>" in svg
    assert _bars(response, "chart-writes", "agent") == [2]
    assert _bars(response, "chart-writes", "human") == [3]
    assert _bars(response, "chart-turns", "turns") == [2]
    assert 'data-total="5"' in svg
    assert "<script" not in svg and "style=" not in svg
    # No chart library, no CDN, no inline script anywhere on the page.
    assert re.search(r"<script(?![^>]*\bsrc=\"/static/)", response.text) is None
    assert "http://" not in response.text and "https://" not in response.text


def test_empty_charts_still_render(client, users):
    response = login(client, users.owner).get("/")
    assert response.status_code == 200
    assert _bars(response, "chart-writes", "agent") == []
    assert 'data-total="0"' in response.text


# --- alerts: turns that left pinned memories out ---------------------------------------------


@pytest.fixture
def crowded_turn(settings, users, org):
    settings.MEMORY_MAX_LINES = 2
    for i in range(4):
        writes.publish(
            org.acme, f"policy-{i}", f"standing policy {i}", principal=users.p_owner, pinned=True
        )
    turn = turns.resolve_turn(org.u1, "run-crowded", principal=org.acme_agent)
    assert turn.stats["pinned_omitted"] == 2
    return turn


def test_pinned_omitted_turns_are_listed_as_alerts(client, users, org, crowded_turn):
    turns.resolve_turn(org.x9, "run-globex", principal=org.globex_agent)  # nothing pinned
    response = login(client, users.auditor).get("/")
    assert _stat(response, "alerts") == 1
    alerts = re.search(
        r'<section class="card alert-card" id="alerts">.*?</section>', response.text, re.S
    ).group(0)
    assert '<a href="/runs/acme/u1/run-crowded/">run-crowded</a>' in alerts
    assert '<a href="/actors/acme/u1/">acme/u1</a>' in alerts
    assert "<strong>2</strong>" in alerts
    assert "run-globex" not in alerts


def test_the_alerts_total_stops_at_its_cap(client, users, org, crowded_turn, monkeypatch):
    from memory_console.console.dashboard import reads as dashboard

    turns.resolve_turn(org.u2, "run-crowded-too", principal=org.acme_agent)
    monkeypatch.setattr(dashboard, "ALERT_ROWS", 1)
    response = login(client, users.auditor).get("/")
    assert _stat(response, "alerts") == 2 and "The 1 newest of 2." in response.text
    monkeypatch.setattr(dashboard, "ALERT_CAP", 1)
    response = login(client, users.auditor).get("/")
    assert 'id="stat-alerts">&gt;&#8202;1<' in response.text
    assert "The 1 newest of more than 1." in response.text


def test_another_tenants_alerts_stay_hidden(client, users, crowded_turn):
    response = login(client, users.outsider).get("/")
    assert _stat(response, "alerts") == 0
    assert "run-crowded" not in response.text
    assert "No turn in the last 30 days left a pinned memory out" in response.text


# --- recent events and the chain -------------------------------------------------------------


def test_recent_ledger_events_are_the_readers_ten_newest(client, users, org, activity):
    for i in range(12):
        writes.publish(org.globex, f"g{i}", "globex fact", principal=users.p_outsider)
    response = login(client, users.owner).get("/")
    shown = [int(i) for i in re.findall(r'<tr id="event-(\d+)"', response.text)]
    acme = ["tenant:acme", "team:acme/ops", "actor:acme/u1", "actor:acme/u2"]
    expected = list(
        LedgerEvent.objects.filter(scope__in=acme).order_by("-id").values_list("id", flat=True)[:10]
    )
    assert shown == expected


def test_the_dashboard_never_walks_the_chain(client, users, activity, monkeypatch):
    def walked(*args, **kwargs):
        raise AssertionError("the dashboard must not verify the chain on load")

    monkeypatch.setattr(ledger, "verify", walked)
    response = login(client, users.auditor).get("/")
    assert response.status_code == 200
    assert "Not checked yet" in response.text
    assert 'action="/ledger/verify/"' in response.text


def test_the_chain_status_shows_the_last_check(client, users, activity):
    login(client, users.auditor)
    response = client.post("/ledger/verify/", {"next": "/"})
    assert response["Location"] == "/"
    page = client.get("/")
    count = LedgerEvent.objects.filter(stream="tenant:acme").count()
    assert f'<p class="verdict verdict-ok">ok: {count} events</p>' in page.text


def test_totals_are_estimates_and_for_superusers_only(client, users, activity):
    with as_owner(), connection.cursor() as cursor:  # ANALYZE is the owner's
        cursor.execute("ANALYZE memory_core_ledgerevent")
    response = login(client, users.su).get("/")
    assert re.search(r"≈ \d+ ledger events", response.text)
    assert "planner estimates" not in login(client, users.auditor).get("/").text


def test_the_number_of_queries_does_not_grow_with_history(client, users, org, activity):
    login(client, users.owner)
    client.get("/")  # warm the session
    with CaptureQueriesContext(connection) as few:
        client.get("/")
    for i in range(15):
        writes.remember(org.u1, f"k{i}", f"note {i}", principal=org.acme_agent)
        turns.resolve_turn(org.u1, f"run-more-{i}", principal=org.acme_agent)
    with CaptureQueriesContext(connection) as many:
        client.get("/")
    assert len(many.captured_queries) == len(few.captured_queries)
    # No unbounded count: every COUNT on the big tables is bounded by the 30-day window.
    for query in many.captured_queries:
        sql = query["sql"]
        if "COUNT(" in sql and ("ledgerevent" in sql or "digest" in sql):
            assert '"created_at" >=' in sql, sql


# --- the chart geometry (no database) --------------------------------------------------------


def test_last_days_ends_today_oldest_first():
    days = last_days(date(2026, 3, 2), 3)
    assert days == [date(2026, 2, 28), date(2026, 3, 1), date(2026, 3, 2)]


@pytest.mark.parametrize(
    "value, ceiling", [(0, 1), (1, 1), (2, 2), (3, 5), (7, 10), (11, 20), (120, 200), (500, 500)]
)
def test_nice_ceiling(value, ceiling):
    assert nice_ceiling(value) == ceiling


def test_stacked_bars_scale_to_the_busiest_day():
    days = last_days(date(2026, 3, 2), 3)
    chart = stacked_daily_bars(
        days,
        [
            Series("agent", "by agents", {days[0]: 1, days[2]: 6}),
            Series("human", "by people", {days[2]: 4}),
        ],
    )
    assert chart.scale_max == 10 and chart.total == 11
    first, middle, last = chart.columns
    assert middle.segments == () and middle.title == "2026-03-01: 0 by agents, 0 by people"
    agent, human = last.segments
    assert (agent.key, human.key) == ("agent", "human")
    # Stacked bottom-up: agent from the baseline, people on top; heights in proportion.
    assert agent.y + agent.height == pytest.approx(chart.baseline)
    assert human.y + human.height == pytest.approx(agent.y)
    assert agent.height / human.height == pytest.approx(6 / 4)
    assert agent.height + human.height == pytest.approx(chart.plot_height)
    # A day with one event is never invisible.
    assert first.segments[0].height >= 1
    assert first.x < middle.x < last.x < chart.right_edge


def test_tomorrow_is_never_in_the_window():
    today = timezone.now().date()
    assert last_days(today)[-1] == today and last_days(today)[0] == today - timedelta(days=29)


def test_settled_days_are_counted_once_per_reach_and_recent_days_live(
    client, users, org, activity, monkeypatch
):
    from types import SimpleNamespace

    from memory_console.console.dashboard import reads as dashboard

    # Three days on, today's writes lie on a settled day: counted once, then cached.
    later = timezone.now() + timedelta(days=3)
    monkeypatch.setattr(dashboard, "timezone", SimpleNamespace(now=lambda: later))
    assert _stat(login(client, users.su).get("/"), "agent-writes") == 3
    writes.remember(org.u1, "pet", "has a cat", principal=org.acme_agent)
    assert _stat(login(client, users.su).get("/"), "agent-writes") == 3  # from the cache
    # Another reach has its own entry, counted now: it sees the new write, and only acme's.
    assert _stat(login(client, users.owner).get("/"), "agent-writes") == 3
    # Back to now: the last hour or two are counted on every view.
    monkeypatch.undo()
    assert _stat(login(client, users.su).get("/"), "agent-writes") == 4


def test_settled_days_of_turns_are_counted_once_and_recent_days_live(
    client, users, org, activity, monkeypatch
):
    from types import SimpleNamespace

    from memory_console.console.dashboard import reads as dashboard

    later = timezone.now() + timedelta(days=3)
    monkeypatch.setattr(dashboard, "timezone", SimpleNamespace(now=lambda: later))
    assert _stat(login(client, users.su).get("/"), "turns") == 3
    turns.resolve_turn(org.u1, "run-late", principal=org.acme_agent)
    assert _stat(login(client, users.su).get("/"), "turns") == 3  # from the cache
    # Another reach has its own entry, counted now: the new turn, and only acme's turns.
    assert _stat(login(client, users.owner).get("/"), "turns") == 3
    monkeypatch.undo()
    assert _stat(login(client, users.su).get("/"), "turns") == 4


def test_an_hour_that_ended_over_an_hour_ago_is_counted_once(
    client, users, org, activity, monkeypatch
):
    from types import SimpleNamespace

    from memory_console.console.dashboard import reads as dashboard

    # Two hours on, this hour has settled (whether or not midnight came between).
    later = timezone.now() + timedelta(hours=2)
    monkeypatch.setattr(dashboard, "timezone", SimpleNamespace(now=lambda: later))
    assert _stat(login(client, users.su).get("/"), "turns") == 3
    assert _stat(login(client, users.su).get("/"), "agent-writes") == 3
    turns.resolve_turn(org.u1, "run-in-the-hour", principal=org.acme_agent)
    writes.remember(org.u1, "pet", "has a cat", principal=org.acme_agent)
    assert _stat(login(client, users.su).get("/"), "turns") == 3  # the hour, from the cache
    assert _stat(login(client, users.su).get("/"), "agent-writes") == 3
    monkeypatch.undo()
    response = login(client, users.su).get("/")
    assert _stat(response, "turns") == 4 and _stat(response, "agent-writes") == 4


def test_turns_settle_by_the_minute_and_changes_by_the_hour(
    client, users, org, activity, monkeypatch
):
    """Five minutes on, the minute of this turn has settled (a turn is dated and written by
    one statement): counted once, then cached; a change, dated inside a transaction that
    may run longer, is still counted live for an hour."""
    from types import SimpleNamespace

    from memory_console.console.dashboard import reads as dashboard

    later = timezone.now() + timedelta(minutes=5)
    monkeypatch.setattr(dashboard, "timezone", SimpleNamespace(now=lambda: later))
    assert _stat(login(client, users.su).get("/"), "turns") == 3
    turns.resolve_turn(org.u1, "run-in-the-minute", principal=org.acme_agent)
    writes.remember(org.u1, "pet", "has a cat", principal=org.acme_agent)
    response = login(client, users.su).get("/")
    assert _stat(response, "turns") == 3  # its minute, from the cache
    assert _stat(response, "agent-writes") == 4  # counted live
    monkeypatch.undo()
    assert _stat(login(client, users.su).get("/"), "turns") == 4


def test_the_live_part_of_the_turns_chart_is_the_last_minutes_only(db, monkeypatch):
    """What is counted on every view starts at the last settled minute, two to three
    minutes back, whatever the time of the hour; each earlier minute of the hour is a part
    of its own (cached), each earlier hour one part."""
    from types import SimpleNamespace

    from memory_console.console.dashboard import reads as dashboard
    from memory_core.models import Digest

    now = timezone.now().replace(minute=59, second=30, microsecond=0)
    monkeypatch.setattr(dashboard, "timezone", SimpleNamespace(now=lambda: now))
    counted = []

    def count(rows):
        counted.append(str(rows.query))
        return {}

    everything = SimpleNamespace(everything=True)
    since = now - timedelta(days=30)
    dashboard._parts(
        "t", Digest.objects.all(), since, everything, count, dashboard.TURN_SETTLE_MARGIN
    )
    live_from = now.replace(minute=57, second=0)
    assert f">= {live_from}" in counted[-1] and "<" not in counted[-1].split("WHERE")[1]
    this_hour = [q for q in counted if f">= {now:%Y-%m-%d %H}:" in q]
    assert len(this_hour) == 57 + 1  # from 00 to 56 a minute each, then the live part
