"""The actor search (`/actors/?q=&tenant=&team=&page=`): the actors a user may open, found
by a piece of their ref or name, by tenant, or by a team in their chain, a page at a time
(the scopes tree lists every actor's scope, which stops being usable past a few hundred).

The actor page: its chain, every memory that applies to it, its conflicts, its recent
turns, and a preview of the block its agent would get now for a query; and, for an
administrator, the erasure of the person it stands for (memory_core/erasure.py). The
applied set and the conflicts are paged (reads.py), each list on its own (`?keys=N`,
`?conflicts=N`); without JavaScript the links load the page, with htmx they swap their
section alone (hx-target names it, and the view renders only that)."""

from django.contrib import messages
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_GET
from django_htmx.http import HttpResponseClientRedirect

from memory_console.console.actors import reads
from memory_console.console.actors.forms import ActorSearch, EraseForm, PreviewQuery
from memory_console.console.common.access import actor_for_reader, console_view
from memory_console.console.common.actions import Notice, error_text, htmx_action
from memory_console.console.common.forms import page_number
from memory_console.console.common.links import actor_path
from memory_console.console.common.rendering import render_page, wants_fragment
from memory_core import erasure, turns
from memory_core.accounts.permissions import role_for
from memory_core.accounts.principals import Principal
from memory_core.actors import chain_of
from memory_core.errors import DomainError, Invalid, NotFound
from memory_core.ledger import access_log
from memory_core.models import Actor

PAGE = "console/actors/actor.html"
PREVIEW = "console/actors/_block_preview.html"
ERASE = "console/actors/_actor_erase.html"
SECTIONS = {
    "applies": "console/actors/_actor_applies.html",
    "conflicts": "console/actors/_actor_conflicts_section.html",
}


@console_view
@require_GET
def actor_search(request):
    filters = ActorSearch(request.GET).values()
    found = reads.search_page(request.user, filters, page_number(request.GET.get("page")))
    context = {"filters": filters, "filtering": any(filters.values()), **found}
    response = render_page(
        request, "console/actors/actors.html", context, fragment="console/actors/_actor_rows.html"
    )
    access_log.record(
        Principal.for_user(request.user), "actor.search", 200, count=len(found["actors"])
    )
    return response


def _preview(request, actor: Actor, readable) -> tuple[dict, int]:
    """preview_turn's answer (which writes its own access-log row): never a stored digest."""
    query = PreviewQuery(request.GET).values()["q"]
    try:
        turn = turns.preview_turn(
            actor, principal=Principal.for_user(request.user), query=query or None
        )
    except Invalid as error:
        # htmx does not swap a 4xx answer into the page, so the fragment says it with a 200.
        status = 200 if wants_fragment(request) else 422
        return {"query": query, "turn": None, "error": error.message}, status
    linkable = reads.linkable(turn.memory_ids, readable)
    return {"query": query, "turn": turn, "linkable": linkable, "error": None}, 200


def _pager(request, page, param: str, section: str) -> dict:
    """The section's page links (_actor_pager.html): every other parameter is kept."""

    def address(number: int) -> str:
        query = request.GET.copy()
        query[param] = str(number)
        return f"{request.path}?{query.urlencode()}#{section}"

    return {
        "target": section,
        "page": page,
        "first": address(1) if page.number > 2 else "",
        "previous": address(page.previous_page_number()) if page.has_previous() else "",
        "next": address(page.next_page_number()) if page.has_next() else "",
        "last": address(page.paginator.num_pages)
        if page.number < page.paginator.num_pages - 1
        else "",
    }


def _sections(request, chain, readable, only: str | None = None) -> dict:
    """One page of the applied set and of the conflicts (or of `only`), with their pagers."""
    numbers = {name: page_number(request.GET.get(name)) for name in ("keys", "conflicts")}
    context = reads.sections(chain, readable, numbers, only)
    if "keys_page" in context:
        context["keys_pager"] = _pager(request, context.pop("keys_page"), "keys", "applies")
    if "conflicts_page" in context:
        pages = context.pop("conflicts_page")
        context["conflicts_pager"] = _pager(request, pages, "conflicts", "conflicts")
    return context


def _log_read(request, actor: Actor, context: dict) -> None:
    access_log.record(
        Principal.for_user(request.user),
        "actor.read",
        200,
        actor_ref=actor.ref,
        scope=actor.scope.token,
        memory_ids=context["shown_uids"],
        count=context["applied_count"],
    )


@console_view
@require_GET
def actor_detail(request, ref):
    return _actor_page(request, actor_for_reader(request.user, ref))


def _section_target(request) -> str | None:
    """The section an htmx pager link asks for (its hx-target), or None."""
    if not wants_fragment(request):
        return None
    target = request.htmx.target
    return target if target in SECTIONS else None


def _actor_page(request, actor: Actor, *, erase_error: str | None = None, status: int = 200):
    readable = reads.readable_for(request.user)
    section = _section_target(request)
    if section is not None:
        # A pager link's swap: that section alone (no preview is composed).
        context = {"actor": actor, **_sections(request, chain_of(actor), readable, only=section)}
        response = render(request, SECTIONS[section], context)
        patch_vary_headers(response, ("HX-Request",))
        _log_read(request, actor, context)
        return response
    preview, preview_status = _preview(request, actor, readable)
    context = {"actor": actor, "preview": preview, "erase_error": erase_error}
    if wants_fragment(request):
        # The preview form's swap: only the block, and only preview_turn's log row.
        return render_page(request, PAGE, context, fragment=PREVIEW, status=preview_status)
    chain = chain_of(actor)
    context["role"] = role_for(request.user, actor.scope)
    context.update(_sections(request, chain, readable))
    context.update(reads.page_context(actor, chain, readable))
    response = render_page(request, PAGE, context, status=max(status, preview_status))
    _log_read(request, actor, context)
    return response


def actor_erase(request, ref):
    """POST `/actors/<ref>/erase/` erases actor <ref>. Any other method is meant for the
    actor whose ref ends in "/erase" (`acme/erase`), whose page shares the address: routed
    there, so no host's choice of user id hides a page (as scopes/views.scope_publish)."""
    if request.method != "POST":
        return actor_detail(request, f"{ref}/erase")
    return _erase(request, ref=ref)


def _erase_invalid(request, error, ref):
    """A plain POST with the wrong confirmation: the actor page, the message by the form."""
    actor = actor_for_reader(request.user, ref)
    return _actor_page(request, actor, erase_error=error.message, status=422)


def _erase_refused(request, error: DomainError, ref):
    """htmx's answer to a refusal or a wrong confirmation: the erase section, message inside
    (status 200: common/actions.py says why)."""
    try:
        # The refusal being answered was logged; this only asks what may be shown.
        actor = actor_for_reader(request.user, ref, action=None)
    except NotFound:
        notice = Notice("error", error_text(error, readable=False))
        return render(request, "console/common/_action_notice.html", {"notice": notice})
    if isinstance(error, Invalid):
        return render(request, ERASE, {"actor": actor, "erase_error": error.message})
    notice = Notice("error", error_text(error, readable=True))
    return render(request, ERASE, {"actor": actor, "notice": notice})


# (A GET never reaches here: actor_erase routes it to the actor page first.)
@htmx_action(page=actor_path, refused=_erase_refused, invalid=_erase_invalid)
def _erase(request, ref):
    actor = actor_for_reader(request.user, ref, action="actor.erase")
    EraseForm(request.POST, ref=actor.ref).cleaned()  # the ref, typed to confirm
    erased = erasure.erase_actor(actor, principal=Principal.for_user(request.user))
    messages.success(request, erased.report(actor.ref))
    # The page is the same address, now empty of the person: htmx goes there like the
    # redirect, with the report waiting as a flash message.
    page = reverse("console:actor", kwargs={"ref": actor.ref})
    if wants_fragment(request):
        return HttpResponseClientRedirect(page)
    return redirect(page)


def actor_reopen(request, ref):
    """POST `/actors/<ref>/reopen/`: a superuser lets an erased ref be written again. Any
    other method is the page of the actor whose ref ends in "/reopen" (as actor_erase)."""
    if request.method != "POST":
        return actor_detail(request, f"{ref}/reopen")
    return _reopen(request, ref=ref)


@htmx_action(page=actor_path, refused=_erase_refused)
def _reopen(request, ref):
    actor = actor_for_reader(request.user, ref, action="actor.reopen")
    erasure.reopen_actor(actor, principal=Principal.for_user(request.user))
    messages.success(request, f"Reopened {actor.ref}: agents may write for it again.")
    return redirect(reverse("console:actor", kwargs={"ref": actor.ref}))
