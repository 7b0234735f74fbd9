"""The access-log page: who read or changed what, on whose behalf, newest first, paged by
row id; refused attempts highlighted and counted over a bounded window, so probing shows
at a glance.

Every list query is `visible AND filter ORDER BY id DESC LIMIT n` on an index of
(column, -id) (memory_core/models/access.py); "refused only" walks the partial index
access_refused_idx; the refusal count reads only the rows of its window (access_created_idx).
"""

from datetime import timedelta

from django.db.models import Count
from django.utils import timezone
from django.views.decorators.http import require_GET

from memory_console.console.access import access_rows_for_reader, console_view
from memory_console.console.audit_rows import filtered_rows, mark_memory_links, who_filters
from memory_console.console.cursors import cursor_id, newest_first
from memory_console.console.forms import ACCESS_ACTIONS, REFUSED_FROM, AccessFilter
from memory_console.console.rendering import render_page

# Without a chosen window, the refusal count covers the last day.
DEFAULT_COUNT_WINDOW = timedelta(hours=24)
WINDOW_WORDS = {
    "1h": "in the last hour",
    "24h": "in the last 24 hours",
    "7d": "in the last 7 days",
    "30d": "in the last 30 days",
}
TOP_PROBERS = 5


def refusal_window(form: AccessFilter, now) -> tuple:
    """(since, until, words): the selected window, or the last 24 hours without one."""
    values = form.values()
    since, until = form.bounds(now)
    if since is None:
        return now - DEFAULT_COUNT_WINDOW, until, "in the last 24 hours"
    if values["window"]:
        return since, until, WINDOW_WORDS[values["window"]]
    words = f"since {since:%Y-%m-%d %H:%M} UTC"
    if until is not None:
        words += f" until {until:%Y-%m-%d %H:%M} UTC"
    return since, until, words


def refusals_in_window(request, form: AccessFilter, now=None):
    """The readable refusals of the window, with the page's who/for-whom/what filters.
    Bounded by the window's start, so it never counts the whole log."""
    now = now or timezone.now()
    since, until, words = refusal_window(form, now)
    rows = who_filters(access_rows_for_reader(request.user), form.values()).filter(
        outcome__gte=REFUSED_FROM, created_at__gte=since
    )
    if until is not None:
        rows = rows.filter(created_at__lt=until)
    return rows, words


@console_view
@require_GET
def access_list(request):
    form = AccessFilter(request.GET)
    now = timezone.now()
    page = newest_first(
        filtered_rows(request, form, now),
        before=cursor_id(request.GET.get("before")),
        after=cursor_id(request.GET.get("after")),
    )
    mark_memory_links(request.user, page.rows)
    refused, window_words = refusals_in_window(request, form, now)
    probers = list(
        refused.values("principal")
        .annotate(n=Count("id"))
        .order_by("-n", "principal")[:TOP_PROBERS]
    )
    filters = form.values()
    context = {
        "filters": filters,
        "filtering": any(filters.values()),
        "page": page,
        "refused_count": refused.count(),
        "refused_words": window_words,
        "probers": probers,
        "actions": ACCESS_ACTIONS,
        "outcomes": [c for c in AccessFilter.base_fields["outcome"].choices if c[0]],
        "refused_from": REFUSED_FROM,
    }
    return render_page(
        request, "console/access.html", context, fragment="console/_access_rows.html"
    )
