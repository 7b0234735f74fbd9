"""What the dashboard shows: the last 30 days at a glance, within the user's grants.

Its cost must not grow with history: every figure is a bounded window (the last 30 days,
on ledger_created_idx and digest_recent_idx), a LIMIT on an index (recent events, alerts
on digest_pinned_omitted_idx), the live-memory counts the database keeps per scope
(memory_core.summaries), or, for all-time totals, the planner's estimate
(pg_class.reltuples). The chain is not re-verified here: the page shows this person's last
check and a button to run one.

The writes chart counts ledger events, which never change once appended, and the turns
chart stored turns, whose time never changes: the days before yesterday, and each hour
since that ended more than an hour ago, are counted once per reach and kept in the cache (a
table every server shares); the last hour or two are counted on every view (a transaction
still open may yet write a row dated in them).
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
    audit_reach,
    digests_for_reader,
    ledger_events_for_reader,
)
from memory_console.console.dashboard.charts import Series, last_days, stacked_daily_bars
from memory_core.accounts.permissions import readable_scope_roles
from memory_core.garden.reads import health_for_reader, open_counts
from memory_core.ledger import checkpoints
from memory_core.models import ProposalKind, ScopeHealth
from memory_core.summaries import top_live_counts

WINDOW_DAYS = 30
AGENT_WRITES = ["memory.remembered"]
HUMAN_WRITES = ["memory.published", "memory.corrected", "memory.promoted"]
RECENT_EVENTS = 10
ALERT_ROWS = 20
# The alerts' total stops here ("more than 1,000"): when pinned policies outgrow the budget
# every turn is an alert, and counting 30 days of them read every turn of the month.
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
# A turn's digest is dated and written by one statement (turns.STORE_TURN), so a minute
# that ended this long ago has all of its turns.
TURN_SETTLE_MARGIN = timedelta(minutes=2)
HOUR = timedelta(hours=1)
MINUTE = timedelta(minutes=1)
CACHE_SECONDS = 2 * 86400
MINUTE_CACHE_SECONDS = 2 * 3600


def _steps(start, end, step) -> list:
    return [start + n * step for n in range((end - start) // step)]


def _parts(name: str, rows, since, reach, count, margin=SETTLE_MARGIN) -> list:
    """count() of `rows` since `since`, in parts to add up: the days before yesterday (one
    cache entry per reach and day), each settled hour since, then each settled minute (one
    entry per reach and hour or minute; settled: ended `margin` ago), and what is left,
    counted on every view. A day of 60,000 turns (the bench's 1m) took 21 ms to count on
    every view; at 200 turns a second the last hour alone is 720,000, so turns settle by
    the minute and only the last two or three minutes are counted live."""
    now = timezone.now()
    today = datetime.combine(now.date(), time.min, tzinfo=UTC)
    settled = now - margin
    days_until = max(since, today - timedelta(days=1))
    hours_until = max(days_until, settled.replace(minute=0, second=0, microsecond=0))
    minutes_until = max(hours_until, settled.replace(second=0, microsecond=0))
    prefix = f"dashboard-{name}:{_reach_key(reach)}"
    days_key = f"{prefix}:{since.date()}:{days_until.date()}"
    hours = {
        f"{prefix}:h:{h.isoformat()}": (h, HOUR) for h in _steps(days_until, hours_until, HOUR)
    }
    minutes = {
        f"{prefix}:m:{m.isoformat()}": (m, MINUTE)
        for m in _steps(hours_until, minutes_until, MINUTE)
    }
    found = cache.get_many([days_key, *hours, *minutes])
    fresh, fresh_minutes = {}, {}
    if days_key not in found:
        fresh[days_key] = count(rows.filter(created_at__gte=since, created_at__lt=days_until))
    for periods, into in ((hours, fresh), (minutes, fresh_minutes)):
        for key, (start, length) in periods.items():
            if key not in found:
                into[key] = count(rows.filter(created_at__gte=start, created_at__lt=start + length))
    if fresh:
        cache.set_many(fresh, timeout=CACHE_SECONDS)
    if fresh_minutes:
        cache.set_many(fresh_minutes, timeout=MINUTE_CACHE_SECONDS)
    recent = count(rows.filter(created_at__gte=minutes_until))
    return [*found.values(), *fresh.values(), *fresh_minutes.values(), recent]


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


def _count_turns(runs) -> dict:
    return dict(
        runs.annotate(day=TruncDate("created_at"))
        .values("day")
        .annotate(n=Count("id"))
        .order_by()
        .values_list("day", "n")
    )


def _turns(runs, since, reach) -> dict:
    """The turns chart's counts since `since`: a stored turn keeps its time (erasure blanks
    its text, never the row), so settled periods are counted once, like the writes."""
    return _sum_days(_parts("turns", runs, since, reach, _count_turns, TURN_SETTLE_MARGIN))


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
    runs = digests_for_reader(user).filter(created_at__gte=since)
    turns = _turns(runs, since, reach)
    omitted = runs.filter(pinned_omitted__gt=0)
    alerts_seen = omitted.order_by().values("id")[: ALERT_CAP + 1].count()
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
        "alerts": list(omitted.order_by("-created_at", "-id")[:ALERT_ROWS]),
        "alert_count": min(alerts_seen, ALERT_CAP),
        "alerts_more": alerts_seen > ALERT_CAP,
        "scopes": scopes,
        "more_scopes": max(0, totals.scopes - len(scopes)),
        "live_human": totals.human,
        "live_agent": totals.agent,
        "recent_events": list(events.order_by("-id")[:RECENT_EVENTS]),
        "last_checkpoint": checkpoints.last_taken(),
        "estimates": _estimates() if reach.everything else None,
        "garden": garden_summary(user),
    }


# --- gardening (memory_core/garden/): open proposals per kind, the health report ---------


def garden_summary(user) -> dict:
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
        "health": _health(user),
        "bar_width": BAR_WIDTH,
    }


HEALTH_FIELDS = ("live", "never_shown", "turns", "omitted", "omitting_turns", "pinned_omitted")


def _health(user) -> dict:
    """health_for_reader, kept in the cache per reach and per state of the health table.

    The report changes only when a gardening pass rewrites the table, and a pass writes
    every row it measures with its own time: the latest time and the row count within the
    reach (one aggregate) name the state, so a view after a pass never gets the report of
    before it. At 1m the report's two top-10 lists sort 11,200 scopes (24 ms a view)."""
    roles = readable_scope_roles(user)
    rows = (
        ScopeHealth.objects.all()
        if roles is None
        else ScopeHealth.objects.filter(scope_id__in=list(roles))
    )
    state = rows.aggregate(at=Max("measured_at"), n=Count("scope_id"))
    if not state["n"]:
        return health_for_reader(user)
    reach = "all" if roles is None else ",".join(map(str, sorted(roles)))
    digest = hashlib.sha256(f"{reach}|{state['at'].isoformat()}|{state['n']}".encode())
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
