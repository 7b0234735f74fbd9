"""The memory finder (`/memories/`). Its rows can be selected for a bulk action
(bulk_views.py): ticked one by one, every row of the page, or every match of the filters."""

from django.views.decorators.http import require_GET

from memory_console.console.common.access import console_view
from memory_console.console.common.forms import page_number
from memory_console.console.common.rendering import render_page
from memory_console.console.finder import reads
from memory_console.console.finder.forms import (
    FINDER_BULK_LABELS,
    FINDER_SORTS,
    MEMORY_STATES,
    SCOPE_KINDS,
    FinderFilter,
)
from memory_core import bulk
from memory_core.accounts.principals import Principal
from memory_core.ledger import access_log


def _carried(filters: dict, page: int) -> list[tuple[str, str]]:
    """The filters and the page as the bulk form sends them on (hidden fields in the rows,
    so they follow every htmx swap): what "this page" and "every match" select."""
    carried = []
    for name, value in filters.items():
        if value:
            carried.append((name, value.isoformat() if hasattr(value, "isoformat") else value))
    return [*carried, ("page", str(page))]


@console_view
@require_GET
def memory_finder(request):
    filters = FinderFilter(request.GET).values()
    found = reads.find(request.user, filters, page_number(request.GET.get("page")))
    context = {
        "filters": filters,
        "filtering": any(v for k, v in filters.items() if k not in ("state", "sort"))
        or filters["state"] != "live",
        "found": found,
        "rows": [(m, reads.state_of(m)) for m in found.rows],
        "kinds": SCOPE_KINDS,
        "states": MEMORY_STATES,
        "sorts": FINDER_SORTS,
        "bulk_actions": FINDER_BULK_LABELS,
        "bulk_carried": _carried(filters, found.page),
        "max_batch": bulk.MAX_BATCH,
        "count_cap": reads.COUNT_CAP,
    }
    response = render_page(
        request, "console/finder/finder.html", context, fragment="console/finder/_finder_rows.html"
    )
    access_log.record(
        Principal.for_user(request.user),
        "memory.find",
        200,
        memory_ids=[m.uid for m in found.rows],
        count=len(found.rows),
    )
    return response
