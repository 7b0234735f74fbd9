"""The actor page: its chain, every memory that applies to it, its conflicts, its recent
turns, and a preview of the block its agent would get now for a query; and, for an
administrator, the erasure of the person it stands for (memory_core/erasure.py)."""

from dataclasses import dataclass

from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_GET
from django_htmx.http import HttpResponseClientRedirect

from memory_console.console.access import actor_for_reader, console_view, readable_scope_roles
from memory_console.console.actions import Notice, error_text, htmx_action
from memory_console.console.forms import AUTHOR_COMBINATION_LABELS, page_number
from memory_console.console.links import actor_path
from memory_console.console.rendering import render_page, wants_fragment
from memory_core import applied, erasure, turns
from memory_core.accounts.permissions import role_for
from memory_core.accounts.principals import Principal
from memory_core.actors import chain_of
from memory_core.errors import DomainError, Invalid, NotFound
from memory_core.ledger import access_log
from memory_core.models import Actor, Digest, Memory, Scope

RECENT_TURNS = 10
PAGE = "console/actor.html"
PREVIEW = "console/_block_preview.html"
ERASE = "console/_actor_erase.html"


# The applied set and the conflicts are paged: an actor of the benchmark's organisation
# has ~540 keys, and rendering them all made a 350 KiB page (issue 19). Each list pages on
# its own (`?keys=N`, `?conflicts=N`); without JavaScript the links load the page, with htmx
# they swap their section alone (hx-target names it, and the view renders only that).
APPLIED_PAGE = 50
CONFLICTS_PAGE = 10
SECTIONS = {
    "applies": "console/_actor_applies.html",
    "conflicts": "console/_actor_conflicts_section.html",
}


@dataclass(frozen=True)
class Applied:
    """One key as the actor sees it: the winning memory and the wider values it beats."""

    memory: Memory
    overrides: list[Memory]
    pinned: bool  # a pin anywhere in the chain makes the key always-on


@dataclass(frozen=True)
class Beaten:
    """A conflict in this actor's chain: the narrower value wins over the wider one."""

    narrow: Memory
    wide: Memory

    @property
    def authors(self) -> str:
        return f"{self.narrow.author}>{self.wide.author}"

    @property
    def authors_label(self) -> str:
        return AUTHOR_COMBINATION_LABELS[self.authors]


def _readable(user):
    """scope id -> may the user open pages at that scope (one query for the whole page)."""
    roles = readable_scope_roles(user)
    return lambda scope_id: roles is None or scope_id in roles


def _preview(request, actor: Actor, readable) -> tuple[dict, int]:
    """preview_turn's answer (which writes its own access-log row): never a stored digest."""
    query = request.GET.get("q", "")
    try:
        turn = turns.preview_turn(
            actor, principal=Principal.for_user(request.user), query=query or None
        )
    except Invalid as error:
        # htmx does not swap a 4xx answer into the page, so the fragment says it with a 200.
        status = 200 if wants_fragment(request) else 422
        return {"query": query, "turn": None, "error": error.message}, status
    scope_of = dict(Memory.objects.filter(uid__in=turn.memory_ids).values_list("uid", "scope_id"))
    linkable = {uid for uid, scope_id in scope_of.items() if readable(scope_id)}
    return {"query": query, "turn": turn, "linkable": linkable, "error": None}, 200


def _conflict_pairs(entries) -> list[tuple]:
    """(narrow record, wide record) for every value a narrower one beats; as on the
    conflicts page: an agent overriding a person first, then by key."""
    pairs = [(e.winner, wide) for e in entries for wide in e.overrides]
    return sorted(pairs, key=lambda p: (f"{p[0].author}>{p[1].author}" != "agent>human", p[0].key))


def _page_of(request, rows: list, param: str, size: int):
    return Paginator(rows, size).get_page(page_number(request.GET.get(param)))


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
    """The applied set and the conflicts, one page of each (or of `only`), resolved from
    the chain's records; model objects are read for the rows on screen alone."""
    entries = applied.chain_entries(chain)
    context = {"applied_count": len(entries)}
    pairs = _conflict_pairs(entries)
    context["conflict_count"] = len(pairs)
    wanted: set[str] = set()
    if only in (None, "applies"):
        keys = _page_of(request, entries, "keys", APPLIED_PAGE)
        wanted |= {r.id for e in keys for r in (e.winner, *e.overrides)}
    if only in (None, "conflicts"):
        beaten = _page_of(request, pairs, "conflicts", CONFLICTS_PAGE)
        wanted |= {r.id for pair in beaten for r in pair}
    by_uid = (
        Memory.objects.select_related("scope", "origin_actor")
        .defer("search")
        .in_bulk(sorted(wanted), field_name="uid")
    )
    # A memory forgotten between the two reads is simply not shown.
    if only in (None, "applies"):
        context["applied"] = [
            Applied(
                by_uid[e.winner.id], [by_uid[o.id] for o in e.overrides if o.id in by_uid], e.pinned
            )
            for e in keys
            if e.winner.id in by_uid
        ]
        context["keys_pager"] = _pager(request, keys, "keys", "applies")
    if only in (None, "conflicts"):
        context["conflicts"] = [
            Beaten(by_uid[n.id], by_uid[w.id]) for n, w in beaten if {n.id, w.id} <= by_uid.keys()
        ]
        context["conflicts_pager"] = _pager(request, beaten, "conflicts", "conflicts")
    shown = list(by_uid.values())
    context["shown_uids"] = sorted(by_uid)
    context["linkable"] = {m.uid for m in shown if readable(m.scope_id)}
    context["readable_tokens"] = {m.scope.token for m in shown if readable(m.scope_id)}
    return context


def _page_context(request, actor: Actor, readable) -> dict:
    chain = chain_of(actor)
    scopes = Scope.objects.in_bulk(chain, field_name="token")
    return {
        "role": role_for(request.user, actor.scope),
        "chain": [
            {"token": token, "scope": scopes.get(token), "readable": readable(scopes[token].id)}
            for token in chain
            if token in scopes
        ],
        **_sections(request, chain, readable),
        # The list shows each turn's query and stats: its block and entries stay behind.
        "recent": list(
            Digest.objects.filter(actor=actor)
            .defer("block", "entries")
            .order_by("-created_at", "-id")[:RECENT_TURNS]
        ),
    }


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
    readable = _readable(request.user)
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
    context.update(_page_context(request, actor, readable))
    response = render_page(request, PAGE, context, status=max(status, preview_status))
    _log_read(request, actor, context)
    return response


def actor_erase(request, ref):
    """POST `/actors/<ref>/erase/` erases actor <ref>. Any other method is meant for the
    actor whose ref ends in "/erase" (`acme/erase`), whose page shares the address: routed
    there, so no host's choice of user id hides a page (as views/scopes.scope_publish)."""
    if request.method != "POST":
        return actor_detail(request, f"{ref}/erase")
    return _erase(request, ref=ref)


def _erase_invalid(request, error, ref):
    """A plain POST with the wrong confirmation: the actor page, the message by the form."""
    actor = actor_for_reader(request.user, ref)
    return _actor_page(request, actor, erase_error=error.message, status=422)


def _erase_refused(request, error: DomainError, ref):
    """htmx's answer to a refusal or a wrong confirmation: the erase section, message inside
    (status 200: console/actions.py says why)."""
    try:
        # The refusal being answered was logged; this only asks what may be shown.
        actor = actor_for_reader(request.user, ref, action=None)
    except NotFound:
        notice = Notice("error", error_text(error, readable=False))
        return render(request, "console/_action_notice.html", {"notice": notice})
    if isinstance(error, Invalid):
        return render(request, ERASE, {"actor": actor, "erase_error": error.message})
    notice = Notice("error", error_text(error, readable=True))
    return render(request, ERASE, {"actor": actor, "notice": notice})


# (A GET never reaches here: actor_erase routes it to the actor page first.)
@htmx_action(page=actor_path, refused=_erase_refused, invalid=_erase_invalid)
def _erase(request, ref):
    actor = actor_for_reader(request.user, ref, action="actor.erase")
    # Typing the ref is the console's confirmation that the person means this actor; a
    # wrong ref changes nothing.
    if request.POST.get("confirm_ref", "").strip() != actor.ref:
        raise Invalid("type the actor's ref exactly to confirm; nothing was erased")
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
