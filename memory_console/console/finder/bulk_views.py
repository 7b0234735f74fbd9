"""Bulk actions on the memories selected in the finder or on a scope page, their reports and
their undo. Every step is post/redirect/get, so a reload never runs anything again:

- review, `GET /memories/bulk/?action=…&m=…` (or `select=page` / `select=matches` with the
  finder's filters): how many and which memories, with their texts, and what the action
  needs (an invalidation's reason, a republish's scope, pin and retirement, a forget's
  typed count). Nothing runs. A scope page's selection is POSTed here and sent (303) to it.
- confirm, `POST /memories/bulk/` with `confirm`: memory_core.bulk runs it, one change per
  memory, and the answer is a 303 to its report.
- report, `GET /memories/bulk/<bulk id>/`: read back from the bulk's record, memory by
  memory, for whoever reads each memory's scope (another tenant's bulk is a 404).
- undo, `GET /memories/bulk/<bulk id>/undo/` (what it will do, member by member) and
  `POST` the same address: every change of the bulk reverted as a new bulk, then a 303 to
  that bulk's report.
"""

from django.http import HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.views.decorators.http import require_GET

from memory_console.console.common.access import (
    console_view,
    memory_for_reader,
    scope_for_reader,
)
from memory_console.console.common.actions import safe_next
from memory_console.console.common.rendering import render_page
from memory_console.console.finder import bulk_reads, reads
from memory_console.console.finder.forms import (
    PIN_LABELS,
    REPORT_LABELS,
    BackTo,
    BulkForm,
    BulkSelection,
    FinderFilter,
)
from memory_core import bulk
from memory_core.accounts.principals import Principal
from memory_core.errors import Forbidden, Invalid, NotFound
from memory_core.ledger import access_log
from memory_core.models import Memory

CONFIRM = "console/finder/bulk_confirm.html"


def _see_other(url: str) -> HttpResponseRedirect:
    response = HttpResponseRedirect(url)
    response.status_code = 303  # See Other: the result, fetched with a GET
    return response


def _safe(request, target) -> str:
    """`target` if it is an address on this host, else ""."""
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return ""


def report_url(bulk_id: str, back: str = "") -> str:
    url = reverse("console:memories-bulk-report", kwargs={"uid": bulk_id})
    return f"{url}?{urlencode({'next': back})}" if back else url


def _selection(user, uids: list[str]) -> tuple[list[Memory], int]:
    """The selected memories the user reads, and how many ids named none of them."""
    chosen, missing = [], 0
    for uid in uids:
        try:
            chosen.append(memory_for_reader(user, uid))
        except NotFound:
            missing += 1
    return chosen, missing


def _selected(user, selection: dict, query) -> tuple[list[str], int | None]:
    """The ids a review is of, and (for every match) how many matched (capped)."""
    if selection["select"] in ("page", "matches"):
        filters = FinderFilter(query).values()
        if selection["select"] == "page":
            found = reads.find(user, filters, selection["page"] or 1)
            return [m.uid for m in found.rows], None
        return reads.matching_uids(user, filters, bulk.MAX_BATCH)
    return selection["m"] or [], None


def _context(request, action: str, memories, missing: int, back: str, **more) -> dict:
    return {
        "action": action,
        "label": REPORT_LABELS[action],
        "memories": memories,
        "missing": missing,
        "next": back,
        "targets": reads.bulk_targets(request.user, memories) if action == "republish" else [],
        "pin_labels": PIN_LABELS,
        "max_batch": bulk.MAX_BATCH,
        "count_cap": reads.COUNT_CAP,
        "matched": None,
        **more,
    }


def _bulk_invalid(request, error):
    return render_page(
        request,
        CONFIRM,
        {"error": error.message, "memories": [], "missing": 0, "action": ""},
        status=422,
    )


@console_view(invalid=_bulk_invalid)
def bulk_action(request):
    """GET: the review of a selection. POST: a scope page's selection, sent on to its
    review; with `confirm`, the action run, and a 303 to its report."""
    if request.method == "POST":
        form = BulkForm(request.POST)
        sent = form.cleaned()
        if not sent["confirm"]:
            query = {"action": sent["action"], "m": sent["m"], "next": safe_next(request) or ""}
            return _see_other(f"{reverse('console:memories-bulk')}?{urlencode(query, True)}")
        return _confirmed(request, form)
    if request.method not in ("GET", "HEAD"):
        return HttpResponseNotAllowed(["GET", "HEAD", "POST"])
    return _review(request)


def _review(request):
    selection = BulkSelection(request.GET).values()
    action = selection["action"]
    if not action:
        return redirect("console:memories")
    uids, matched = _selected(request.user, selection, request.GET)
    memories, missing = _selection(request.user, bulk.check_batch(action, uids))
    back = _safe(request, selection["next"])
    context = _context(request, action, memories, missing, back, matched=matched)
    response = render_page(request, CONFIRM, context)
    access_log.record(
        Principal.for_user(request.user),
        "bulk.review",
        200,
        memory_ids=[m.uid for m in memories],
        count=len(memories),
    )
    return response


def _confirmed(request, form: BulkForm):
    sent = form.cleaned()
    action = sent["action"]
    memories, missing = _selection(request.user, bulk.check_batch(action, sent["m"]))
    back = safe_next(request) or ""
    problem = form.confirmation_problem(action, memories)
    if problem:
        context = _context(request, action, memories, missing, back, error=problem)
        return render_page(request, CONFIRM, {**context, "posted": form.data}, status=422)
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
        pinned=sent["pin"] or "original",
        retire_original=sent["retire_original"],
    )
    return _see_other(report_url(report.bulk_id, back))


@console_view
@require_GET
def bulk_report(request, uid):
    report = bulk_reads.bulk_for_reader(request.user, uid)
    lines = bulk_reads.members(request.user, report)
    undone_by = bulk.undone_by(report.bulk_id)
    context = {
        "report": report,
        "label": REPORT_LABELS.get(report.action, report.action),
        "lines": lines,
        "done": len(report.done),
        "not_done": len(report.failed),
        "undone_by": undone_by,
        "undoable": report.action in bulk.UNDOABLE and not undone_by and bool(report.done),
        "may_undo": bulk_reads.administers_any(request.user, [o.scope for o in report.done]),
        "pin_label": PIN_LABELS.get(report.pinned, report.pinned),
        "next": _safe(request, BackTo(request.GET).values()["next"]),
    }
    response = render_page(request, "console/finder/bulk_report.html", context)
    _log_read(request, "bulk.read", [line.uid for line in lines])
    return response


def _log_read(request, action: str, uids: list[str]) -> None:
    access_log.record(
        Principal.for_user(request.user),
        action,
        200,
        memory_ids=[uid for uid in uids if uid],
        count=len(uids),
        detail={"bulk": request.resolver_match.kwargs["uid"]},
    )


def _undo_page(request, report, *, error: str = "", status: int = 200):
    steps = bulk_reads.undo_steps(request.user, report)
    refusal = error
    if not refusal:
        try:
            bulk.check_undoable(report)
        except Invalid as refused:
            refusal = refused.message
    context = {
        "report": report,
        "label": REPORT_LABELS.get(report.action, report.action),
        "lines": bulk_reads.step_members(request.user, report, steps),
        "runs": sum(1 for step in steps if not step.skip),
        "unchanged": len(report.done) - len(steps),
        "error": refusal,
        "may_undo": bulk_reads.administers_any(request.user, [s.scope for s in steps]),
    }
    response = render_page(request, "console/finder/bulk_undo.html", context, status=status)
    _log_read(request, "bulk.review", [s.member for s in steps])
    return response


def _undo_invalid(request, error, uid):
    report = bulk_reads.bulk_for_reader(request.user, uid, action=None)
    return _undo_page(request, report, error=error.message, status=422)


@console_view(invalid=_undo_invalid)
def bulk_undo(request, uid):
    """GET: what undoing the bulk will do. POST: do it, as a new bulk; 303 to its report."""
    report = bulk_reads.bulk_for_reader(request.user, uid, action="bulk.undo")
    if request.method in ("GET", "HEAD"):
        return _undo_page(request, report)
    if request.method != "POST":
        return HttpResponseNotAllowed(["GET", "HEAD", "POST"])
    principal = Principal.for_user(request.user)
    steps = bulk_reads.undo_steps(request.user, report)
    if steps and not bulk_reads.administers_any(request.user, [step.scope for step in steps]):
        with access_log.refusals_logged(principal, "bulk.undo"):
            raise Forbidden("undoing this bulk needs an administrator of its memories' scopes")
    undone = bulk.undo_bulk(
        report,
        steps,
        principal=principal,
        lookup=lambda uid: memory_for_reader(request.user, uid),
    )
    return _see_other(report_url(undone.bulk_id))
