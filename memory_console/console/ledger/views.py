"""The ledger page: the events a user may read, newest first, filtered, paged by event id;
live (htmx polls for events newer than the top row); and the chain check. The access-log
page: who read or changed what, on whose behalf, newest first, paged by row id; refused
attempts highlighted and counted over a bounded window, so probing shows at a glance.

Every list query is `visible AND filter ORDER BY id DESC LIMIT n`, each filter backed by an
index on (column, -id) (memory_core/models/ledger.py, memory_core/models/access.py), so a
page costs the same on a ledger of a thousand events or of a hundred million; "refused
only" walks the partial index access_refused_idx; the refusal count reads only the rows of
its window (access_created_idx). The exports of both are export_views.py; each page links
its own, with its filters as it applied them.

Filters read actor and scope names as the user types them (common/names.py); a name that
is ambiguous for this user is said so above the rows.
"""

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET

from memory_console.console.common.access import audit_reach, console_view
from memory_console.console.common.cursors import cursor_id, newer_than, newest_first
from memory_console.console.common.forms import NextPage
from memory_console.console.common.methods import post_only
from memory_console.console.common.rendering import render_page, wants_fragment
from memory_console.console.ledger.export_forms import export_offer
from memory_console.console.ledger.forms import (
    ACCESS_ACTIONS,
    LEDGER_KINDS,
    LOGGED_OUTCOMES,
    REFUSED_FROM,
    AccessFilter,
    LedgerFilter,
    VerifyForm,
)
from memory_console.console.ledger.payloads import mark_payloads
from memory_console.console.ledger.reads import (
    filtered_events,
    filtered_rows,
    mark_memory_links,
    refusals,
)
from memory_console.console.ledger.verification import (
    VERIFICATION_KEY,
    chain_summary,
    checkpoint_summary,
    configured_key_id,
    last_verification,
    shown_verification,
)
from memory_core.errors import Invalid
from memory_core.ledger import checkpoints

# How often an open ledger page asks for new events (static/js/live-poll.js pauses it
# while the tab is hidden or the person pressed "Pause").
POLL_SECONDS = 5


@console_view
@require_GET
def ledger_list(request):
    form = LedgerFilter(request.GET, user=request.user)
    after = cursor_id(request.GET.get("after"))
    page = newest_first(
        filtered_events(request.user, form),
        before=cursor_id(request.GET.get("before")),
        after=after,
    )
    mark_payloads(request.user, page.rows)
    filters = form.values()
    context = {
        "filters": filters,
        "filtering": any(filters.values()),
        "name_problems": form.name_problems,
        "export": export_offer(form, "ledger"),
        "page": page,
        "poll_after": page.newest_id if page.rows else (after or 0),
        "poll_seconds": POLL_SECONDS,
        "kinds": LEDGER_KINDS,
        "verification": last_verification(request),
        "checkpoint_key_id": configured_key_id(),
        "last_checkpoint": checkpoints.last_taken(),
    }
    return render_page(
        request, "console/ledger/ledger.html", context, fragment="console/ledger/_ledger_rows.html"
    )


@console_view
@require_GET
def ledger_new(request):
    """The live view's poll: readable events newer than `after`, matching the filters.
    204 (htmx swaps nothing) when there are none."""
    after = cursor_id(request.GET.get("after"))
    if after is None:
        raise Invalid("after=<event id> is required")
    form = LedgerFilter(request.GET, user=request.user)
    events = mark_payloads(request.user, newer_than(filtered_events(request.user, form), after))
    if not events:
        return HttpResponse(status=204)
    context = {"events": events, "poll_after": events[0].id, "poll_seconds": POLL_SECONDS}
    return render(request, "console/ledger/_ledger_new.html", context)


def _back(request) -> str:
    """The page the check was asked from (`next`, kept only on this host), else the ledger."""
    return NextPage(request).target() or "console:ledger"


def _verify_refused(request, error):
    """A checkpoint or public key that cannot be read: nothing was checked and the last
    verdict stands. The page the check was asked from again with the message (htmx: the
    chain status with the message inside), never a dead-end error page."""
    if wants_fragment(request):
        context = {"verification": last_verification(request), "verify_error": error.message}
        return render(request, "console/ledger/_ledger_verify.html", context)
    messages.error(request, error.message)
    return redirect(_back(request))


@post_only("console:ledger")
@console_view(invalid=_verify_refused)
def ledger_verify(request):
    """Walk the hash chains the user reads (every chain for a superuser); with an uploaded
    checkpoint, also check its signature and heads (verification.py)."""
    form = VerifyForm(request.POST, request.FILES).cleaned()
    reach = audit_reach(request.user)
    if form["checkpoint"] is not None:
        summary = checkpoint_summary(form["checkpoint"], form["public_key"], reach)
    else:
        summary = chain_summary(reach)
    request.session[VERIFICATION_KEY] = summary
    verification = shown_verification(summary)
    if wants_fragment(request):
        return render(request, "console/ledger/_ledger_verify.html", {"verification": verification})
    if summary["ok"]:
        messages.success(request, verification["message"])
    else:
        messages.error(request, verification["message"])
    return redirect(_back(request))


@console_view
@require_GET
def access_list(request):
    form = AccessFilter(request.GET, user=request.user)
    now = timezone.now()
    page = newest_first(
        filtered_rows(request.user, form, now),
        before=cursor_id(request.GET.get("before")),
        after=cursor_id(request.GET.get("after")),
    )
    mark_memory_links(request.user, page.rows)
    refused = refusals(request.user, form, now)
    filters = form.values()
    context = {
        "filters": filters,
        "filtering": any(filters.values()),
        "name_problems": form.name_problems,
        "export": export_offer(form, "access"),
        "page": page,
        **refused,
        "actions": ACCESS_ACTIONS,
        "outcomes": LOGGED_OUTCOMES,
        "refused_from": REFUSED_FROM,
    }
    return render_page(
        request, "console/ledger/access.html", context, fragment="console/ledger/_access_rows.html"
    )
