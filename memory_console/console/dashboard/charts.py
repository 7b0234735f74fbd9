"""Small daily bar charts, drawn on the server as inline SVG (no chart library, no script).

The dashboard's view counts per day; these pure functions turn the counts into geometry
that the `bar_chart` tag (memory_console/templatetags/dashboard_charts.py) draws. Tested
without a database.
"""

from dataclasses import dataclass
from datetime import date, timedelta

WIDTH, HEIGHT = 640, 150
LEFT, RIGHT, TOP, BOTTOM = 36, 6, 10, 20  # room for the value axis and the date labels


@dataclass(frozen=True)
class Series:
    key: str  # the CSS class suffix: bar-agent, bar-human, bar-turns
    label: str
    by_day: dict  # {date: count}


@dataclass(frozen=True)
class Segment:
    key: str
    value: int
    y: float
    height: float


@dataclass(frozen=True)
class Column:
    day: date
    x: float
    width: float
    total: int
    segments: tuple
    title: str  # the hover text: every number of the day in words


@dataclass(frozen=True)
class BarChart:
    columns: tuple
    series: tuple
    scale_max: int
    total: int
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    top: int = TOP
    baseline: int = HEIGHT - BOTTOM
    right_edge: int = WIDTH - RIGHT

    @property
    def first_day(self) -> date | None:
        return self.columns[0].day if self.columns else None

    @property
    def last_day(self) -> date | None:
        return self.columns[-1].day if self.columns else None

    @property
    def plot_height(self) -> int:
        return self.baseline - self.top

    @property
    def label_y(self) -> int:
        return self.height - 5

    @property
    def top_label_y(self) -> int:
        return self.top + 4

    @property
    def axis_label_x(self) -> int:
        return self.left - 5


def last_days(today: date, count: int = 30) -> list[date]:
    """`count` days ending with today, oldest first."""
    return [today - timedelta(days=offset) for offset in range(count - 1, -1, -1)]


def nice_ceiling(value: int) -> int:
    """The axis top: the smallest of 1, 2, 5, 10, 20, 50 … at or above `value`."""
    if value <= 1:
        return 1
    step = 1
    while True:
        for factor in (1, 2, 5):
            if step * factor >= value:
                return step * factor
        step *= 10


def stacked_daily_bars(days: list[date], series: list[Series]) -> BarChart:
    """One column per day, the series stacked bottom-up in the order given."""
    totals = [sum(s.by_day.get(day, 0) for s in series) for day in days]
    scale_max = nice_ceiling(max(totals, default=0))
    plot_height = HEIGHT - BOTTOM - TOP
    slot = (WIDTH - LEFT - RIGHT) / max(len(days), 1)
    bar = round(slot * 0.72, 2)
    columns = []
    for index, (day, total) in enumerate(zip(days, totals, strict=True)):
        x = round(LEFT + index * slot + (slot - bar) / 2, 2)
        bottom = HEIGHT - BOTTOM
        segments = []
        for s in series:
            value = s.by_day.get(day, 0)
            if not value:
                continue
            # A day with one event still shows: never thinner than one unit of the viewBox.
            height = max(round(value / scale_max * plot_height, 2), 1.0)
            bottom -= height
            segments.append(Segment(s.key, value, round(bottom, 2), height))
        words = ", ".join(f"{s.by_day.get(day, 0)} {s.label}" for s in series)
        columns.append(Column(day, x, bar, total, tuple(segments), f"{day.isoformat()}: {words}"))
    return BarChart(
        columns=tuple(columns),
        series=tuple(series),
        scale_max=scale_max,
        total=sum(totals),
    )
