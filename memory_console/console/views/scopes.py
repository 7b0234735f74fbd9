"""The scope tree, one scope's live memories, and publishing a memory there."""

from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Count, F, Func, Q
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_GET

from memory_console.console.access import (
    console_view,
    readable_scope_roles,
    scope_for_reader,
)
from memory_console.console.bulk_labels import BULK_LABELS
from memory_console.console.forms import (
    PAGE_SIZE,
    MemoryFilter,
    checked,
    page_number,
    parse_tags,
)
from memory_console.console.methods import post_only
from memory_console.console.rendering import render_page
from memory_console.console.tree import flatten_tree
from memory_core import audit, search, writes
from memory_core.actors import ancestors
from memory_core.errors import NotFound
from memory_core.models import Author, Memory, Scope
from memory_core.models.access import Role
from memory_core.names import ref_of_scope
from memory_core.permissions import role_for
from memory_core.principals import Principal


@console_view
@require_GET
def scope_list(request):
    roles = readable_scope_roles(request.user)
    scopes = Scope.objects.select_related("actor").only(
        "id", "token", "label", "parent_id", "actor__display_name", "actor__ref"
    )
    counts = Memory.objects.live().values("scope_id")
    if roles is not None:
        scopes = scopes.filter(id__in=list(roles))
        counts = counts.filter(scope_id__in=list(roles))
    # One aggregate query for every row of the tree, never one count per scope.
    counts = counts.annotate(
        live=Count("id"),
        agent=Count("id", filter=Q(author=Author.AGENT)),
        pinned=Count("id", filter=Q(pinned=True)),
    ).order_by()
    by_scope = {row["scope_id"]: row for row in counts}
    rows = [
        {
            "scope": node.item,
            "indent": node.indent,
            "role": Role.ADMIN if roles is None else roles[node.item.id],
            "counts": by_scope.get(node.item.id, {}),
        }
        for node in flatten_tree(scopes)
    ]
    return render_page(request, "console/scopes.html", {"rows": rows})


# A console search shows the best this many keys of the scope, ranked.
SEARCH_RESULTS = 100


def _filtered(scope: Scope, filters: dict):
    rows = Memory.objects.live().filter(scope=scope).select_related("origin_actor")
    if filters["author"]:
        rows = rows.filter(author=filters["author"])
    if filters["pinned"]:
        rows = rows.filter(pinned=filters["pinned"] == "yes")
    if filters["tag"]:
        rows = rows.filter(tags__contains=[filters["tag"]])
    if filters["q"]:
        # The agents' search rank (hybrid: words and meaning), over this scope's live rows
        # only; the best matches first, then the other filters narrow them.
        _, keys, _ = search.ranked_chain([scope.token], filters["q"], SEARCH_RESULTS)
        place = {key: n for n, key in enumerate(keys)}
        found = rows.filter(key__in=keys)
        return sorted(found, key=lambda m: place[m.key])
    return rows.order_by("-created_at", "-id")


def _scope_tags(scope: Scope) -> list[str]:
    return list(
        Memory.objects.live()
        .filter(scope=scope)
        .annotate(tag=Func(F("tags"), function="unnest"))
        .values_list("tag", flat=True)
        .distinct()
        .order_by("tag")
    )


def _render_scope(request, scope: Scope, *, publish_error=None, status=200):
    user = request.user
    role = role_for(user, scope)
    filters = MemoryFilter(request.GET).values()
    paginator = Paginator(_filtered(scope, filters), PAGE_SIZE)
    page = paginator.get_page(page_number(request.GET.get("page")))
    readable = readable_scope_roles(user)
    trail = [
        {"scope": s, "readable": readable is None or s.id in readable}
        for s in reversed(ancestors(scope)[1:])
    ]
    context = {
        "scope": scope,
        "role": role,
        "can_publish": role == Role.ADMIN,
        "bulk_actions": BULK_LABELS,
        "trail": trail,
        "actor_ref": ref_of_scope(scope.token),
        "filters": filters,
        "filtering": any(filters.values()),
        "tags": _scope_tags(scope),
        "page": page,
        "page_range": paginator.get_elided_page_range(page.number, on_each_side=2, on_ends=1),
        "publish_error": publish_error,
        "posted": request.POST if publish_error else {},
    }
    response = render_page(
        request, "console/scope.html", context, fragment="console/_memory_rows.html", status=status
    )
    audit.record(
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
        scope_for_reader(user, token)
    except NotFound:
        return False
    return True


def _scope_page(token) -> str:
    return reverse("console:scope", kwargs={"token": token})


@post_only(_scope_page)
@console_view(invalid=_publish_invalid)
def _publish(request, token):
    scope = scope_for_reader(request.user, token)
    memory = writes.publish(
        scope,
        request.POST.get("key", "").strip(),
        request.POST.get("text", "").strip(),
        principal=Principal.for_user(request.user),
        pinned=checked(request.POST, "pinned"),
        tags=parse_tags(request.POST.get("tags", "")),
    )
    messages.success(request, f"Published {memory.uid} at {scope.token}.")
    return redirect("console:scope", token=scope.token)
