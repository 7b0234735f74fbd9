"""The memory finder (`/memories/`) and bulk actions on the memories selected there or on
a scope page (`/memories/bulk/`).

A bulk action is two POSTs: the first (the selection and the action) is answered with a
confirmation page naming how many and which (ids and keys) and asking what the action
needs (an invalidation's reason, a republish's scope, a forget's typed count); nothing
runs until that page is sent back with `confirm`. Then memory_core.bulk runs it, one
change per memory, and the answer is the report, memory by memory.
"""

from django.shortcuts import redirect
from django.views.decorators.http import require_GET

from memory_console.console.common.access import (
    console_view,
    memory_for_reader,
    scope_for_reader,
)
from memory_console.console.common.actions import safe_next
from memory_console.console.common.forms import page_number
from memory_console.console.common.rendering import render_page
from memory_console.console.finder import reads
from memory_console.console.finder.forms import (
    BULK_LABELS,
    FINDER_SORTS,
    MEMORY_STATES,
    SCOPE_KINDS,
    BulkForm,
    FinderFilter,
)
from memory_core import bulk
from memory_core.accounts.principals import Principal
from memory_core.errors import NotFound
from memory_core.ledger import access_log
from memory_core.models import Memory


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
        "bulk_actions": BULK_LABELS,
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


def _selection(request, uids: list[str]) -> tuple[list[Memory], int]:
    """The selected memories the user reads, and how many ids named none of them."""
    chosen, missing = [], 0
    for uid in uids:
        try:
            chosen.append(memory_for_reader(request.user, uid))
        except NotFound:
            missing += 1
    return chosen, missing


def _bulk_invalid(request, error):
    return render_page(
        request,
        "console/finder/bulk_confirm.html",
        {"error": error.message, "memories": [], "missing": 0, "action": ""},
        status=422,
    )


@console_view(invalid=_bulk_invalid)
def bulk_action(request):
    """POST: the confirmation page; POST with `confirm`: run it and show the report.
    A GET (a reload of the report, a bookmark) goes to the finder."""
    if request.method != "POST":
        return redirect("console:memories")
    form = BulkForm(request.POST)
    sent = form.cleaned()
    action = sent["action"]
    uids = bulk.check_batch(action, sent["m"])
    memories, missing = _selection(request, uids)
    context = {
        "action": action,
        "label": BULK_LABELS[action],
        "memories": memories,
        "missing": missing,
        "next": safe_next(request) or "",
        "targets": reads.bulk_targets(request.user, memories) if action == "republish" else [],
        "posted": form.data,
    }
    if not sent["confirm"]:
        return render_page(request, "console/finder/bulk_confirm.html", context)
    problem = form.confirmation_problem(action, memories)
    if problem:
        return render_page(
            request, "console/finder/bulk_confirm.html", {**context, "error": problem}, status=422
        )
    target = None
    if action == "republish":
        target = scope_for_reader(request.user, sent["target"], action="promote")
    report = bulk.run(
        action,
        [m.uid for m in memories],
        principal=Principal.for_user(request.user),
        lookup=lambda uid: memory_for_reader(request.user, uid),
        reason=sent["reason"],
        target=target,
    )
    return render_page(
        request,
        "console/finder/bulk_report.html",
        {**context, "report": report, "done": report.done, "failed": report.failed},
    )
