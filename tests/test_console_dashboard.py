"""The dashboard: figures and charts within the user's grants, pinned_omitted alerts, recent
events, the chain status without re-verifying, and a cost that does not grow with history."""

import re
from datetime import UTC, date, datetime, time, timedelta

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
from memory_core import actors, turns, writes
from memory_core.accounts.principals import Principal
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


def test_turns_are_read_from_the_kept_hours_current_whatever_the_clock_says(
    client, users, org, activity, monkeypatch
):
    """No day or hour of turns is cached: a turn counts as soon as it is written, even on a
    day the writes chart has settled, and each reach adds only its own tenants' hours."""
    from types import SimpleNamespace

    from memory_console.console.dashboard import reads as dashboard

    later = timezone.now() + timedelta(days=3)
    monkeypatch.setattr(dashboard, "timezone", SimpleNamespace(now=lambda: later))
    assert _stat(login(client, users.su).get("/"), "turns") == 3
    turns.resolve_turn(org.u1, "run-late", principal=org.acme_agent)
    assert _stat(login(client, users.su).get("/"), "turns") == 4
    assert _stat(login(client, users.owner).get("/"), "turns") == 3  # acme's: u1 twice, u2
    assert _stat(login(client, users.outsider).get("/"), "turns") == 1
    monkeypatch.undo()
    assert _stat(login(client, users.su).get("/"), "turns") == 4


def test_an_hour_of_writes_that_ended_over_an_hour_ago_is_counted_once(
    client, users, org, activity, monkeypatch
):
    from types import SimpleNamespace

    from memory_console.console.dashboard import reads as dashboard

    # Two hours on, this hour has settled (whether or not midnight came between).
    later = timezone.now() + timedelta(hours=2)
    monkeypatch.setattr(dashboard, "timezone", SimpleNamespace(now=lambda: later))
    assert _stat(login(client, users.su).get("/"), "agent-writes") == 3
    turns.resolve_turn(org.u1, "run-in-the-hour", principal=org.acme_agent)
    writes.remember(org.u1, "pet", "has a cat", principal=org.acme_agent)
    response = login(client, users.su).get("/")
    assert _stat(response, "agent-writes") == 3  # the hour, from the cache
    assert _stat(response, "turns") == 4  # turns are never cached
    monkeypatch.undo()
    response = login(client, users.su).get("/")
    assert _stat(response, "turns") == 4 and _stat(response, "agent-writes") == 4


def test_the_writes_are_counted_in_three_kept_spans_and_the_last_hour_live(db, monkeypatch):
    """The days before yesterday, the settled hours since, the settled minutes of the next
    hour: one count each, then read from the cache; only the last hour (from its first
    unsettled minute) is counted on every view, whatever the time of the hour."""
    from types import SimpleNamespace

    from memory_console.console.dashboard import reads as dashboard

    now = timezone.now().replace(minute=59, second=30, microsecond=0)
    monkeypatch.setattr(dashboard, "timezone", SimpleNamespace(now=lambda: now))
    counted = []

    def count(rows):
        counted.append(str(rows.query).split("WHERE")[1])
        return {}

    everything = SimpleNamespace(everything=True)
    since = datetime.combine(now.date() - timedelta(days=29), time.min, tzinfo=UTC)
    yesterday = datetime.combine(now.date() - timedelta(days=1), time.min, tzinfo=UTC)
    settled_hour = (now - timedelta(hours=1)).replace(minute=0, second=0)
    live_from = (now - timedelta(hours=1)).replace(second=0)
    dashboard._parts("w", LedgerEvent.objects.all(), since, everything, count)
    bounds = [(since, yesterday), (yesterday, settled_hour), (settled_hour, live_from)]
    assert len(counted) == 4
    for where, (start, end) in zip(counted, bounds, strict=False):
        assert f">= {start}" in where and f"< {end}" in where
    assert f">= {live_from}" in counted[3] and "<" not in counted[3]
    counted.clear()
    dashboard._parts("w", LedgerEvent.objects.all(), since, everything, count)
    assert len(counted) == 1 and f">= {live_from}" in counted[0]  # the rest from the cache


# --- turns and alerts: what the kept hours give equals a recount, for every reader ------------


def _window_start():
    return datetime.combine(last_days(timezone.now().date())[0], time.min, tzinfo=UTC)


def _day_titles(response, chart, label) -> dict[str, int]:
    svg = re.search(rf'<svg class="chart" id="{chart}".*?</svg>', response.text, re.S).group(0)
    found = re.findall(rf"<title>(\d{{4}}-\d\d-\d\d): (\d+) {label}</title>", svg)
    return {day: int(n) for day, n in found if int(n)}


def _recounted(user) -> tuple[dict[str, int], int, list[str]]:
    """Turns per day, alerts and the newest alerts' runs, counted over the stored turns the
    user may read, as the dashboard counted them on every view before it kept hours."""
    from django.db.models import Count
    from django.db.models.functions import TruncDate

    from memory_console.console.common.access import digests_for_reader

    runs = digests_for_reader(user).filter(created_at__gte=_window_start())
    days = runs.annotate(day=TruncDate("created_at")).values("day").annotate(n=Count("id"))
    per_day = {row["day"].isoformat(): row["n"] for row in days.order_by()}
    alerts = runs.filter(pinned_omitted__gt=0).order_by("-created_at", "-id")
    return per_day, alerts.count(), [d.run_id for d in alerts[:20]]


@pytest.fixture
def team_admin(users, org):
    """An administrator of team:acme/ops: reads u1 (a member) but not u2 or the tenant."""
    from django.contrib.auth import get_user_model

    from memory_core.accounts.grants import grant
    from memory_core.accounts.principals import Principal

    user = get_user_model().objects.create_user("team-admin", "t@example.com", "pw-team-123")
    grant("team-admin", org.ops, "admin", principal=Principal.system("cli:test"))
    return user


@pytest.fixture
def month_of_turns(org):
    """Turns of every actor over the window and before it: on the window's first instant
    and just before it, on hour and day boundaries, today; a third left pinned memories
    out. Written as one statement, as a bulk import or a burst of turns would be."""
    from tests.test_turn_hours import insert_turns

    loner = actors.put_actor("loner", "Loner", [], org.global_key, Principal.system("cli:t"))
    start = _window_start()
    now = timezone.now()
    moments = [start - timedelta(microseconds=1), start, start + timedelta(hours=1)]
    moments += [start + timedelta(days=d, hours=h) for d in (3, 11, 28) for h in (0, 13, 23)]
    moments += [start + timedelta(days=29) - timedelta(microseconds=1)]
    moments += [now - timedelta(minutes=m) for m in (0, 1, 59, 61, 90)]
    rows = [
        (actor, at, 2 if (n + i) % 3 == 0 else 0)
        for n, at in enumerate(moments)
        for i, actor in enumerate([org.u1, org.u2, org.x9, loner][: 1 + n % 4])
    ]
    insert_turns(rows)
    return rows


@pytest.mark.parametrize("who", ["su", "owner", "auditor", "outsider", "team_admin"])
def test_turns_and_alerts_equal_a_recount_for_each_reader(
    client, users, month_of_turns, team_admin, who
):
    user = team_admin if who == "team_admin" else getattr(users, who)
    per_day, alert_count, alert_runs = _recounted(user)
    response = login(client, user).get("/")
    assert response.status_code == 200
    assert _day_titles(response, "chart-turns", "turns") == per_day
    assert _stat(response, "turns") == sum(per_day.values())
    assert _stat(response, "alerts") == alert_count
    alerts = re.search(r'<section class="card[^"]*" id="alerts">.*?</section>', response.text, re.S)
    assert re.findall(r'<a href="/runs/[^"]+/">([^<]+)</a>', alerts.group(0)) == alert_runs
    assert sum(per_day.values()) > 0 and alert_count > 0


def test_a_tenant_administrator_sees_only_its_tenants_turns(client, users, org, month_of_turns):
    acme = {org.u1.id, org.u2.id}
    mine = [(a, at, p) for a, at, p in month_of_turns if a.id in acme and at >= _window_start()]
    response = login(client, users.owner).get("/")
    assert _stat(response, "turns") == len(mine)
    assert _stat(response, "alerts") == sum(1 for _, _, p in mine if p)
    text = re.sub(r"[A-Za-z0-9+/=_-]{32,}", "", response.text)
    assert "globex" not in text and "loner" not in text
    # Another tenant's turn, and one outside every tenant, change nothing for acme.
    turns.resolve_turn(org.x9, "run-globex-more", principal=org.globex_agent)
    assert _stat(login(client, users.owner).get("/"), "turns") == len(mine)
    assert _stat(login(client, users.outsider).get("/"), "turns") == 1 + sum(
        1 for a, at, _ in month_of_turns if a.id == org.x9.id and at >= _window_start()
    )


def test_the_alerts_list_reads_back_only_the_hours_that_hold_the_newest(
    client, users, org, month_of_turns
):
    """The twenty newest alerts come from the newest hours that hold twenty: the query on
    the stored turns starts there, not at the window's start."""
    from tests.test_turn_hours import insert_turns

    now = timezone.now()
    insert_turns([(org.u1, now - timedelta(seconds=n), 1) for n in range(25)])
    login(client, users.su)
    with CaptureQueriesContext(connection) as queries:
        response = client.get("/")
    per_day, alert_count, alert_runs = _recounted(users.su)
    assert _stat(response, "alerts") == alert_count
    alerts = re.search(r'<section class="card[^"]*" id="alerts">.*?</section>', response.text, re.S)
    assert re.findall(r'<a href="/runs/[^"]+/">([^<]+)</a>', alerts.group(0)) == alert_runs
    digest_reads = [
        q["sql"] for q in queries.captured_queries if 'FROM "memory_core_digest"' in q["sql"]
    ]
    assert len(digest_reads) == 1  # the alerts' rows; their total came from the kept hours
    hour = now.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    # Twenty-five alerts in the last 25 seconds: the newest twenty lie in this hour or the last.
    bounds = [f"\"created_at\" >= '{h}'" for h in (hour, hour - timedelta(hours=1))]
    assert any(bound in digest_reads[0] for bound in bounds), digest_reads[0]
    assert '"block"' not in digest_reads[0] and '"entries"' not in digest_reads[0]


def test_a_reach_keeps_three_cache_entries_for_the_writes_whatever_the_hour(
    client, users, activity, monkeypatch
):
    """The days before yesterday, the settled hours, the settled minutes: one entry each,
    not one a period (the cache drops a third of its entries past 300, and a hundred a
    reader made it drop the costly days entry every few views)."""
    from types import SimpleNamespace

    from memory_console.console.dashboard import reads as dashboard

    late = timezone.now().replace(hour=23, minute=59, second=30)
    monkeypatch.setattr(dashboard, "timezone", SimpleNamespace(now=lambda: late))
    for user in (users.su, users.owner):
        assert _stat(login(client, user).get("/"), "agent-writes") >= 0
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT cache_key FROM memory_console_cache WHERE cache_key LIKE %s", ["%dashboard-%"]
        )
        keys = [key for (key,) in cursor.fetchall()]
    assert len(keys) == 6, keys  # two reaches, three each
    assert _stat(login(client, users.su).get("/"), "agent-writes") == 3  # read back from them
