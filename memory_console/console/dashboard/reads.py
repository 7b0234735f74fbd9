"""What the dashboard shows: the last 30 days at a glance, within the user's grants.

Its cost must not grow with history: every figure is a bounded window (the last 30 days,
on ledger_created_idx), a LIMIT on an index (recent events, alerts on
digest_pinned_omitted_idx), counts the database keeps (live memories per scope,
memory_core.summaries; turns and alerts per hour, memory_core.turn_counts), or, for
all-time totals, the planner's estimate (pg_class.reltuples). The chain is not re-verified
here: the page shows this person's last check and a button to run one.

The turns chart, the turns figure and the alerts' total add up the hours the database keeps
per tenant and per actor (at most 720 rows a tenant): always current, never recounted. The
writes chart counts ledger events, which never change once appended: the days before
yesterday, the hours since that ended more than an hour ago and the minutes after those are
three counts per reach kept in the cache (a table every server shares); the last hour is
counted on every view (a transaction still open may yet write a row dated in it).
"""

import hashlib
from datetime import UTC, datetime, time, timedelta

from django.core.cache import cache
from django.db import connection
from django.db.models import BigIntegerField, Count, Max, Sum
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, TruncDate
from django.utils import timezone

from memory_console.console.common.access import (
    AuditReach,
    audit_reach,
    digests_for_reader,
    ledger_events_for_reader,
)
from memory_console.console.dashboard.charts import Series, last_days, stacked_daily_bars
from memory_console.console.ledger.payloads import mark_payloads
from memory_core.garden.reads import health_for_reader, open_counts
from memory_core.ledger import checkpoints
from memory_core.models import ProposalKind, ScopeHealth
from memory_core.summaries import top_live_counts
from memory_core.turn_counts import TurnReach, hours_since, turn_reach

WINDOW_DAYS = 30
AGENT_WRITES = ["memory.remembered"]
HUMAN_WRITES = ["memory.published", "memory.corrected", "memory.promoted"]
RECENT_EVENTS = 10
ALERT_ROWS = 20
# The alerts' total is shown up to here ("more than 1,000"): when pinned policies outgrow
# the budget every turn is an alert, and the exact figure says nothing more.
ALERT_CAP = 1_000
SCOPE_ROWS = 20
# Estimated row counts, shown to superusers only: a tenant's people see no global sizes.
ESTIMATED_TABLES = {
    "memory_core_ledgerevent": "ledger events",
    "memory_core_accesslog": "access-log rows",
    "memory_core_memory": "memory versions",
    "memory_core_digest": "stored turns",
}
BAR_WIDTH = 240  # the gardening chart's bars, in SVG units


def _window_start(days) -> datetime:
    return datetime.combine(days[0], time.min, tzinfo=UTC)


def _count_writes(events) -> tuple[dict, dict, int]:
    """{day: count} for agent and for human writes, and the agents' characters written."""
    rows = (
        events.filter(kind__in=AGENT_WRITES + HUMAN_WRITES)
        .annotate(day=TruncDate("created_at"))
        .values("day", "kind")
        .annotate(n=Count("id"), chars=Sum(Cast(KT("payload__chars"), BigIntegerField())))
        .order_by()
    )
    agent, human, agent_chars = {}, {}, 0
    for row in rows:
        if row["kind"] in AGENT_WRITES:
            agent[row["day"]] = agent.get(row["day"], 0) + row["n"]
            agent_chars += row["chars"] or 0
        else:
            human[row["day"]] = human.get(row["day"], 0) + row["n"]
    return agent, human, agent_chars


def _reach_key(reach) -> str:
    if reach.everything:
        return "all"
    text = "\n".join(sorted(reach.streams)) + "\n\n" + "\n".join(sorted(reach.tokens))
    return hashlib.sha256(text.encode()).hexdigest()


# Counts of rows dated in a period that ended at least this long ago are kept: a row is
# dated when its transaction writes it, and no change's transaction stays open that long.
SETTLE_MARGIN = timedelta(hours=1)
# How long each span's count is kept: a little longer than it is the current one.
DAYS_CACHED = 26 * 3600
HOURS_CACHED = 3900
MINUTES_CACHED = 120


def _parts(name: str, rows, since, reach, count, margin=SETTLE_MARGIN) -> list:
    """count() of `rows` since `since`, in parts to add up: the days before yesterday, the
    settled hours since, the settled minutes of the hour after those (settled: ended
    `margin` ago), each counted once per reach and kept in the cache until the next one
    replaces it, and what is left, counted on every view.

    Three entries a reach, each one count: with an entry a period (up to a hundred a reach)
    the cache table, which keeps 300 entries and then drops the first third by key, dropped
    the days before yesterday every few views and counted a month again, and a cold start
    counted each period by itself, a hundred queries."""
    now = timezone.now()
    today = datetime.combine(now.date(), time.min, tzinfo=UTC)
    settled = now - margin
    days_until = max(since, today - timedelta(days=1))
    hours_until = max(days_until, settled.replace(minute=0, second=0, microsecond=0))
    minutes_until = max(hours_until, settled.replace(second=0, microsecond=0))
    prefix = f"dashboard-{name}:{_reach_key(reach)}"
    spans = {
        f"{prefix}:{kind}:{start.isoformat()}:{end.isoformat()}": (start, end, timeout)
        for kind, start, end, timeout in (
            ("d", since, days_until, DAYS_CACHED),
            ("h", days_until, hours_until, HOURS_CACHED),
            ("m", hours_until, minutes_until, MINUTES_CACHED),
        )
    }
    found = cache.get_many(spans)
    parts = []
    for key, (start, end, timeout) in spans.items():
        if key not in found:
            found[key] = count(rows.filter(created_at__gte=start, created_at__lt=end))
            cache.set(key, found[key], timeout=timeout)
        parts.append(found[key])
    parts.append(count(rows.filter(created_at__gte=minutes_until)))
    return parts


def _sum_days(parts) -> dict:
    total: dict = {}
    for part in parts:
        for day, n in part.items():
            total[day] = total.get(day, 0) + n
    return total


def _writes(events, since, reach):
    """The writes chart's counts since `since` (ledger events never change)."""
    parts = _parts("writes", events, since, reach, _count_writes)
    agent = _sum_days(p[0] for p in parts)
    human = _sum_days(p[1] for p in parts)
    return agent, human, sum(p[2] for p in parts)


def _turn_reach(reach: AuditReach) -> TurnReach:
    if reach.everything:
        return TurnReach(everything=True)
    return turn_reach(reach.tokens, reach.actor_refs)


def _turns(reach: AuditReach, since) -> tuple[dict, int, datetime | None]:
    """{day: turns} since `since`, the turns among them that left pinned memories out, and
    the start of the newest hours that hold the ALERT_ROWS newest of those (None: none)."""
    hours = hours_since(since, _turn_reach(reach))
    by_day: dict = {}
    for hour, turns, _ in hours:
        day = hour.astimezone(UTC).date()
        by_day[day] = by_day.get(day, 0) + turns
    found, alerts_from = 0, None
    for hour, _, alerts in reversed(hours):
        if alerts:
            found, alerts_from = found + alerts, hour
            if found >= ALERT_ROWS:
                break
    return by_day, sum(alerts for _, _, alerts in hours), alerts_from


def _alerts(user, alerts_from) -> list:
    """The ALERT_ROWS newest turns that left pinned memories out, read back no further
    than the hours that hold them (on digest_pinned_omitted_idx or the actors' turns)."""
    if alerts_from is None:
        return []
    rows = digests_for_reader(user).filter(created_at__gte=alerts_from, pinned_omitted__gt=0)
    # What the alerts table shows: never the turn's block, entries or query.
    rows = rows.only("created_at", "run_id", "pinned_omitted", "stats", "actor__ref")
    return list(rows.order_by("-created_at", "-id")[:ALERT_ROWS])


def _live_counts(reach):
    """The biggest scopes' live memories per author, and the totals, from the counts the
    database keeps (memory_core.summaries): sorted and summed in SQL, never a GROUP BY
    over the memories, and never every scope's row in Python."""
    top = top_live_counts(SCOPE_ROWS, None if reach.everything else reach.scope_ids)
    table = [
        {"token": token, "human": c.human, "agent": c.agent, "total": c.live}
        for token, c in top.rows
    ]
    return table, top


def _estimates() -> list[dict]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname, reltuples::bigint FROM pg_class WHERE relname = ANY(%s)",
            [list(ESTIMATED_TABLES)],
        )
        found = dict(cursor.fetchall())
    # -1: never analysed yet, so no estimate to show.
    return [
        {"label": label, "estimate": found.get(table, -1)}
        for table, label in ESTIMATED_TABLES.items()
    ]


def dashboard_context(user) -> dict:
    """Every figure of the page but the user's last chain check (kept in their session)."""
    reach = audit_reach(user)
    days = last_days(timezone.now().date(), WINDOW_DAYS)
    since = _window_start(days)
    events = ledger_events_for_reader(user, reach)
    agent, human, agent_chars = _writes(events, since, reach)
    turns, alerts_seen, alerts_from = _turns(reach, since)
    scopes, totals = _live_counts(reach)
    return {
        "window_days": WINDOW_DAYS,
        "writes_chart": stacked_daily_bars(
            days, [Series("agent", "by agents", agent), Series("human", "by people", human)]
        ),
        "turns_chart": stacked_daily_bars(days, [Series("turns", "turns", turns)]),
        "agent_writes": sum(agent.values()),
        "human_writes": sum(human.values()),
        "agent_chars": agent_chars,
        "turn_count": sum(turns.values()),
        "alerts": _alerts(user, alerts_from),
        "alert_count": min(alerts_seen, ALERT_CAP),
        "alerts_more": alerts_seen > ALERT_CAP,
        "scopes": scopes,
        "more_scopes": max(0, totals.scopes - len(scopes)),
        "live_human": totals.human,
        "live_agent": totals.agent,
        "recent_events": mark_payloads(user, events.order_by("-id")[:RECENT_EVENTS]),
        "last_checkpoint": checkpoints.last_taken(),
        "estimates": _estimates() if reach.everything else None,
        "garden": garden_summary(user, reach),
    }


# --- gardening (memory_core/garden/): open proposals per kind, the health report ---------


def garden_summary(user, reach: AuditReach) -> dict:
    """Open proposals per kind (with bar widths for the chart) and the health report."""
    counts = open_counts(user)
    top = max(counts.values(), default=0)
    kinds = [
        {
            "kind": kind,
            "label": label,
            "count": counts.get(kind, 0),
            "width": round(BAR_WIDTH * counts.get(kind, 0) / top) if top else 0,
            "y": 22 * n,
        }
        for n, (kind, label) in enumerate(ProposalKind.choices)
    ]
    return {
        "kinds": kinds,
        "open": sum(counts.values()),
        "health": _health(user, reach),
        "bar_width": BAR_WIDTH,
    }


HEALTH_FIELDS = ("live", "never_shown", "turns", "omitted", "omitting_turns", "pinned_omitted")


def _health(user, reach: AuditReach) -> dict:
    """health_for_reader, kept in the cache per reach and per state of the health table.

    The report changes only when a gardening pass rewrites the table, and a pass writes
    every row it measures with its own time: the latest time and the row count within the
    reach (one aggregate) name the state, so a view after a pass never gets the report of
    before it. At 1m the report's two top-10 lists sort 11,200 scopes (24 ms a view). The
    reach is the page's (audit_reach: readable_scope_roles, asked once a view)."""
    rows = (
        ScopeHealth.objects.all()
        if reach.everything
        else ScopeHealth.objects.filter(scope_id__in=sorted(reach.scope_ids))
    )
    state = rows.aggregate(at=Max("measured_at"), n=Count("scope_id"))
    if not state["n"]:
        return health_for_reader(user)
    scopes = "all" if reach.everything else ",".join(map(str, sorted(reach.scope_ids)))
    digest = hashlib.sha256(f"{scopes}|{state['at'].isoformat()}|{state['n']}".encode())
    key = f"garden-health:{digest.hexdigest()}"
    report = cache.get(key)
    if report is None:
        report = _plain(health_for_reader(user))
        cache.set(key, report, timeout=86400)
    return report


def _plain(report: dict) -> dict:
    """The report with its rows as plain values (what the template reads), for the cache."""

    def row(health) -> dict:
        return {"scope": {"token": health.scope.token}} | {
            name: getattr(health, name) for name in HEALTH_FIELDS
        }

    return report | {
        "pressure": [row(h) for h in report["pressure"]],
        "unused": [row(h) for h in report["unused"]],
    }
