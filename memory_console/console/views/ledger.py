"""The ledger page: the events a user may read, newest first, filtered, paged by event id;
live (htmx polls for events newer than the top row); and the chain check.

Every list query is `visible AND filter ORDER BY id DESC LIMIT n`, each filter backed by an
index on (column, -id) (memory_core/models/ledger.py), so a page costs the same on a ledger
of a thousand events or of a hundred million.
"""

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET

from memory_console.console.access import audit_reach, console_view
from memory_console.console.audit_rows import filtered_events
from memory_console.console.checkpoint_check import checkpoint_summary, configured_key_id
from memory_console.console.cursors import cursor_id, newer_than, newest_first
from memory_console.console.forms import LEDGER_KINDS, LedgerFilter
from memory_console.console.methods import post_only
from memory_console.console.reads import VERIFICATION_KEY, last_verification, shown_verification
from memory_console.console.rendering import render_page, wants_fragment
from memory_core.errors import Invalid
from memory_core.ledger import checkpoints, ledger

# How often an open ledger page asks for new events (static/js/live-poll.js pauses it
# while the tab is hidden or the person pressed "Pause").
POLL_SECONDS = 5


@console_view
@require_GET
def ledger_list(request):
    form = LedgerFilter(request.GET)
    after = cursor_id(request.GET.get("after"))
    page = newest_first(
        filtered_events(request, form), before=cursor_id(request.GET.get("before")), after=after
    )
    filters = form.values()
    context = {
        "filters": filters,
        "filtering": any(filters.values()),
        "page": page,
        "poll_after": page.newest_id if page.rows else (after or 0),
        "poll_seconds": POLL_SECONDS,
        "kinds": LEDGER_KINDS,
        "verification": last_verification(request),
        "checkpoint_key_id": configured_key_id(),
        "last_checkpoint": checkpoints.last_taken(),
    }
    return render_page(
        request, "console/ledger.html", context, fragment="console/_ledger_rows.html"
    )


@console_view
@require_GET
def ledger_new(request):
    """The live view's poll: readable events newer than `after`, matching the filters.
    204 (htmx swaps nothing) when there are none."""
    after = cursor_id(request.GET.get("after"))
    if after is None:
        raise Invalid("after=<event id> is required")
    events = newer_than(filtered_events(request, LedgerFilter(request.GET)), after)
    if not events:
        return HttpResponse(status=204)
    context = {"events": events, "poll_after": events[0].id, "poll_seconds": POLL_SECONDS}
    return render(request, "console/_ledger_new.html", context)


@post_only("console:ledger")
@console_view
def ledger_verify(request):
    """Walk the hash chains the user reads (every chain for a superuser); with an uploaded
    checkpoint, also check its signature and heads (console/checkpoint_check.py)."""
    reach = audit_reach(request.user)
    if "checkpoint" in request.FILES:
        summary = checkpoint_summary(request, reach)
    else:
        summary = _chain_summary(reach)
    request.session[VERIFICATION_KEY] = summary
    verification = shown_verification(summary)
    if wants_fragment(request):
        return render(request, "console/_ledger_verify.html", {"verification": verification})
    if summary["ok"]:
        messages.success(request, verification["message"])
    else:
        messages.error(request, verification["message"])
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(target, {request.get_host()}, request.is_secure()):
        target = "console:ledger"
    return redirect(target)


def _chain_summary(reach) -> dict:
    streams = None if reach.everything else sorted(reach.streams)
    result = ledger.verify(streams=streams)
    summary = {
        "ok": result.ok,
        "count": result.count,
        "at": timezone.now().isoformat(),
        "streams": streams,
        "problem": result.problem,
        "broken": None,
    }
    if result.broken is not None:
        event = result.broken
        summary["broken"] = {
            "id": event.id,
            "stream": event.stream,
            "seq": event.seq,
            "kind": event.kind,
            # A stream can hold scopes the user does not read (an auditor of a team reads
            # its tenant's stream only in part): such an event is located, never shown.
            "readable": reach.reads_scope(event.scope),
        }
    return summary
