"""The scope tree, one scope's live memories, and publishing a memory there.

The scope tree is shown lazily: at a million memories it holds 10,000 actors.
`global` shows its children (the tenants, and scopes outside every tenant) each closed; a
closed scope opens on demand, with a plain link (`?open=<token>`, the page with that
scope's subtree shown under it) or, with htmx, the same address answering only the rows
of that scope and its subtree in place of its row (reads.py says which rows show).
`?q=` searches by name instead of showing the tree.
"""

from django.contrib import messages
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_GET

from memory_console.console.common.access import (
    console_view,
    parameters_checked,
    readable_scope_roles,
    scope_for_reader,
)
from memory_console.console.common.forms import page_number
from memory_console.console.common.methods import post_only
from memory_console.console.common.rendering import render_page, wants_fragment
from memory_console.console.finder.forms import BULK_LABELS
from memory_console.console.scopes.forms import MemoryFilter, PublishForm, TreeFilter
from memory_console.console.scopes.reads import (
    counted,
    live_memories,
    open_scope,
    opened_rows,
    scope_tags,
    search_scopes,
    trail,
    tree,
)
from memory_core import writes
from memory_core.accounts.permissions import role_for
from memory_core.accounts.principals import Principal
from memory_core.errors import NotFound
from memory_core.ledger import access_log
from memory_core.models import Scope
from memory_core.models.access import Role
from memory_core.rules.names import ref_of_scope


@console_view
@require_GET
def scope_list(request):
    roles = readable_scope_roles(request.user)
    filters = TreeFilter(request.GET).values()
    q = filters["q"]
    context = {"q": q, "searching": bool(q), "has_scopes": roles is None or bool(roles)}
    if q:
        context["rows"], context["found"] = search_scopes(roles, q)
        return render_page(request, "console/scopes/scopes.html", context)
    opened = open_scope(request.user, filters["open"], roles)
    if opened is not None and wants_fragment(request):
        # htmx: the opened scope's rows, in place of its closed row.
        rows = counted(opened_rows(opened, roles, 1 if opened.parent_id else 0, {}))
        return render_page(request, "console/scopes/_scope_rows.html", {"rows": rows})
    rows, _ = tree(roles, opened)
    context["rows"] = counted(rows)
    context["opened"] = opened
    return render_page(request, "console/scopes/scopes.html", context)


def _render_scope(request, scope: Scope, *, publish_error=None, status=200):
    user = request.user
    role = role_for(user, scope)
    filters = MemoryFilter(request.GET).values()
    page = live_memories(scope, filters, page_number(request.GET.get("page")))
    context = {
        "scope": scope,
        "role": role,
        "can_publish": role == Role.ADMIN,
        "bulk_actions": BULK_LABELS,
        "trail": trail(user, scope),
        "actor_ref": ref_of_scope(scope.token),
        "filters": filters,
        "filtering": any(filters.values()),
        "tags": scope_tags(scope),
        "page": page,
        "page_range": page.paginator.get_elided_page_range(page.number, on_each_side=2, on_ends=1),
        "publish_error": publish_error,
        "posted": request.POST if publish_error else {},
    }
    response = render_page(
        request,
        "console/scopes/scope.html",
        context,
        fragment="console/scopes/_memory_rows.html",
        status=status,
    )
    access_log.record(
        Principal.for_user(user),
        "scope.read",
        200,
        actor_ref=ref_of_scope(scope.token),
        scope=scope.token,
        memory_ids=[m.uid for m in page],
        count=len(page),
    )
    return response


@console_view
@require_GET
def scope_detail(request, token):
    return _render_scope(request, scope_for_reader(request.user, token))


def _publish_invalid(request, error, token):
    scope = scope_for_reader(request.user, token)
    return _render_scope(request, scope, publish_error=error.message, status=422)


@parameters_checked
def scope_publish(request, token):
    """POST `/scopes/<token>/publish/` publishes at <token>. A GET is the page of the scope
    whose token ends in "/publish" (`team:acme/publish`), whose page shares the address,
    when the user reads one (so no tenant's choice of team name hides a page); otherwise
    it is sent on to <token>'s page (a reload after a refused publish). Someone not logged
    in goes to the login page and comes back to this address."""
    if request.method in ("GET", "HEAD") and _reads(request.user, f"{token}/publish"):
        return scope_detail(request, f"{token}/publish")
    return _publish(request, token=token)


def _reads(user, token: str) -> bool:
    if not user.is_authenticated:
        return True  # scope_detail's login_required: back here once logged in
    try:
        # Which page the address means, not an attempt on either: not access-logged.
        scope_for_reader(user, token, action=None)
    except NotFound:
        return False
    return True


def _scope_page(token) -> str:
    return reverse("console:scope", kwargs={"token": token})


@post_only(_scope_page)
@console_view(invalid=_publish_invalid)
def _publish(request, token):
    scope = scope_for_reader(request.user, token, action="publish")
    form = PublishForm(request.POST).cleaned()
    memory = writes.publish(
        scope,
        form["key"],
        form["text"],
        principal=Principal.for_user(request.user),
        pinned=form["pinned"],
        tags=form["tags"],
    )
    messages.success(request, f"Published {memory.uid} at {scope.token}.")
    return redirect("console:scope", token=scope.token)
