"""The conflicts page: every key answered at more than one scope of some actor's chain,
with the decisions a person may take about each pair inline.

Pairs whose two values are the same text are duplicates, not conflicts (nothing is
overridden): `?show=duplicates` lists them apart, with one remedy, retiring the narrower
copy (an invalidation that names the wider value it repeats)."""

from django.contrib import messages
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from memory_console.console.common.access import console_view, memory_for_reader
from memory_console.console.common.actions import Notice, error_text, htmx_action, safe_next
from memory_console.console.common.forms import page_number
from memory_console.console.common.rendering import render_page, wants_fragment
from memory_console.console.conflicts.forms import AUTHOR_COMBINATION_LABELS, ConflictFilter
from memory_console.console.conflicts.reads import listing
from memory_console.console.memories.forms import InvalidateForm, RepublishForm
from memory_console.console.memories.page import render_memory
from memory_core.accounts.principals import Principal
from memory_core.errors import NotFound
from memory_core.ledger import access_log
from memory_core.visibility import MEMORY_ID_RE


@console_view
@require_GET
def conflict_list(request):
    filters = ConflictFilter(request.GET).values()
    found = listing(request.user, filters, page_number(request.GET.get("page")))
    page, shown = found.pop("page"), found.pop("shown")
    context = {
        **found,
        "page": page,
        "page_range": page.paginator.get_elided_page_range(page.number, on_each_side=2, on_ends=1),
        "filters": filters,
        "filtering": bool(filters["scope"] or filters["authors"]),
        "author_choices": AUTHOR_COMBINATION_LABELS,
        "here": request.get_full_path(),
    }
    response = render_page(
        request,
        "console/conflicts/conflicts.html",
        context,
        fragment="console/conflicts/_conflict_rows.html",
    )
    access_log.record(
        Principal.for_user(request.user),
        "conflicts.read",
        200,
        scope=filters["scope"] or None,
        memory_ids=list(dict.fromkeys(m.uid for m in shown)),
        count=len(found["rows"]),
    )
    return response


# --- a row's inline decisions -------------------------------------------------------------
# `/conflicts/<narrow uid>/<wide uid>/republish/` and `…/invalidate/`: the row's own
# endpoints. They act on the narrower memory through the same services as its page; htmx
# gets the row's result in its place (_conflict_done.html), a plain POST a redirect back to
# the list (`next`) with a flash message.


def _row_context(request, narrow, wide, memory, notice, *, new=None) -> dict:
    return {
        "row_id": f"conflict-{narrow}-{wide}",
        "notice": notice,
        "memory": memory,
        "new": new,
        "back": safe_next(request) or reverse("console:conflicts"),
    }


def _row_refused(request, error, narrow, wide):
    try:
        # The refusal being answered was logged; this only asks what may be shown.
        memory = memory_for_reader(request.user, narrow, action=None)
    except NotFound:
        memory = None
    notice = Notice("error", error_text(error, readable=memory is not None))
    return render(
        request,
        "console/conflicts/_conflict_done.html",
        _row_context(request, narrow, wide, memory, notice),
    )


def _row_invalid(request, error, narrow, wide):
    """A plain POST's bad value: the memory page, the message beside its form (as there)."""
    memory = memory_for_reader(request.user, narrow)
    action = request.resolver_match.url_name.removeprefix("conflict-")
    return render_memory(
        request, memory, errors={action: error.message}, posted={action: request.POST}, status=422
    )


def _row_done(request, narrow, wide, memory, message, *, new=None):
    if not wants_fragment(request):
        messages.success(request, message)
        return redirect(safe_next(request) or reverse("console:conflicts"))
    context = _row_context(request, narrow, wide, memory, Notice("success", message), new=new)
    return render(request, "console/conflicts/_conflict_done.html", context)


def _narrower(request, narrow, wide):
    if not (MEMORY_ID_RE.fullmatch(narrow) and MEMORY_ID_RE.fullmatch(wide)):
        raise NotFound("conflict not found")
    action = request.resolver_match.url_name.removeprefix("conflict-")
    return memory_for_reader(
        request.user, narrow, action="promote" if action == "republish" else action
    )


@htmx_action(page="console:conflicts", refused=_row_refused, invalid=_row_invalid)
def conflict_republish(request, narrow, wide):
    memory = _narrower(request, narrow, wide)
    form = RepublishForm(request.POST, memory=memory)
    new, message = form.save(Principal.for_user(request.user))
    return _row_done(request, narrow, wide, memory, message, new=new)


@htmx_action(page="console:conflicts", refused=_row_refused, invalid=_row_invalid)
def conflict_invalidate(request, narrow, wide):
    memory = _narrower(request, narrow, wide)
    message = InvalidateForm(request.POST, memory=memory).save(Principal.for_user(request.user))
    return _row_done(request, narrow, wide, memory, message)
