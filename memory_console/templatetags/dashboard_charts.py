"""`{% bar_chart chart name title %}`: a daily bar chart (console/dashboard/charts.py's
geometry) drawn as inline SVG, for templates/console/dashboard/dashboard.html.

Written here in Python rather than as an included template: a chart is thirty columns of a
dozen values each, and the template language took 3-14 ms a chart to fill them in (the
dashboard draws two), this a few hundredths of that. Every value is a number the geometry
computed or a date, but for the chart's name and title and the series' keys and labels,
which are escaped. Colours come from console.css classes, never style attributes.
"""

from django import template
from django.utils.dateformat import format as format_date
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

register = template.Library()


def _column(chart, c) -> str:
    bars = "".join(
        f'<rect class="bar bar-{escape(s.key)}" x="{c.x}" y="{s.y}" width="{c.width}"'
        f' height="{s.height}" data-value="{s.value}"></rect>'
        for s in c.segments
    )
    return (
        f'<g class="day"><title>{escape(c.title)}</title><rect class="slot" x="{c.x}"'
        f' y="{chart.top}" width="{c.width}" height="{chart.plot_height}"></rect>{bars}</g>'
    )


def _legend(chart) -> str:
    if len(chart.series) < 2:
        return ""
    items = "".join(
        f'<li><span class="swatch swatch-{escape(s.key)}" aria-hidden="true"></span>'
        f"{escape(s.label)}</li>"
        for s in chart.series
    )
    return f'<figcaption><ul class="legend">{items}</ul></figcaption>'


def _day_labels(chart) -> str:
    if not chart.columns:
        return ""
    first, last = format_date(chart.first_day, "M j"), format_date(chart.last_day, "M j")
    return (
        f'<text class="tick" x="{chart.left}" y="{chart.label_y}">{escape(first)}</text>\n'
        f'    <text class="tick" x="{chart.right_edge}" y="{chart.label_y}"'
        f' text-anchor="end">{escape(last)}</text>'
    )


@register.simple_tag
def bar_chart(chart, name: str, title: str) -> SafeString:
    """The chart as a <figure> holding its <svg> (id `name`, titled `title`)."""
    name, title = escape(name), escape(title)
    columns = "".join(_column(chart, c) for c in chart.columns)
    return mark_safe(  # noqa: S308 - every interpolated text is escaped above
        f'<figure class="chart-figure">\n'
        f'  <svg class="chart" id="{name}" viewBox="0 0 {chart.width} {chart.height}"'
        f' role="img" aria-labelledby="{name}-title" data-total="{chart.total}">\n'
        f'    <title id="{name}-title">{title}: {chart.total} in {len(chart.columns)} days'
        f"</title>\n"
        f'    <line class="grid" x1="{chart.left}" y1="{chart.top}" x2="{chart.right_edge}"'
        f' y2="{chart.top}"></line>\n'
        f'    <line class="axis" x1="{chart.left}" y1="{chart.baseline}"'
        f' x2="{chart.right_edge}" y2="{chart.baseline}"></line>\n'
        f'    <text class="tick" x="{chart.axis_label_x}" y="{chart.top_label_y}"'
        f' text-anchor="end">{chart.scale_max}</text>\n'
        f'    <text class="tick" x="{chart.axis_label_x}" y="{chart.baseline}"'
        f' text-anchor="end">0</text>\n'
        f"    {columns}\n"
        f"    {_day_labels(chart)}\n"
        f"  </svg>\n"
        f"  {_legend(chart)}\n"
        f"</figure>"
    )
