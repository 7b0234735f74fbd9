"""The API keys page: list, create (secret shown once), pause, resume, revoke (CONSOLE.md,
"API keys"). Each row says whether the key is live, paused, expired or revoked, when it
was last used (to keys.LAST_USED_GRANULARITY) and when it expires; above the list, the
count of live keys per reach.

Who sees what. The list holds every key whose reach one of the user's grants reaches
(superuser: every key). An administrator of a key's reach may revoke it, and may create
keys reaching the scopes they administer; an auditor sees the same list without forms. A
user with no grant at all gets the page with an empty state, as the scope tree does, not a
404: the page's existence is no secret, and it tells them how to get a grant.

The secret. keys.create_api_key hands back the clear secret once. The create POST
redirects (post/redirect/get), so reloading the page never posts the form again and
creates a second key: the secret waits in the user's session for exactly one request,
the redirected GET, which pops it and shows it on a page marked `Cache-Control: no-store`
(neither the browser's cache nor a proxy keeps a copy). A reload after that shows no
secret. It is never put in a URL, logged or flashed, and only a hash is kept with the key.
"""

from datetime import datetime, time

from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Count, Q
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import add_never_cache_headers
from django.utils.dateparse import parse_date
from django.views.decorators.http import require_GET

from memory_console.console.access import api_key_for_admin, console_view, readable_scope_roles
from memory_console.console.forms import PAGE_SIZE, page_number
from memory_console.console.methods import post_only
from memory_console.console.rendering import render_page, wants_fragment
from memory_console.console.tree import flatten_tree
from memory_core.accounts import keys
from memory_core.accounts.permissions import role_for
from memory_core.accounts.principals import Principal
from memory_core.errors import Forbidden, Invalid
from memory_core.ledger import access_log
from memory_core.models import ApiKey, Scope
from memory_core.models.access import Role


def _live() -> Q:
    return Q(revoked_at__isnull=True, paused_at__isnull=True) & (
        Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now())
    )


STATES = {
    "live": _live,
    "paused": lambda: Q(revoked_at__isnull=True, paused_at__isnull=False),
    "expired": lambda: Q(
        revoked_at__isnull=True, paused_at__isnull=True, expires_at__lte=timezone.now()
    ),
    "revoked": lambda: Q(revoked_at__isnull=False),
}


def _visible(roles):
    rows = ApiKey.objects.select_related("reach", "actor")
    if roles is not None:
        rows = rows.filter(reach_id__in=list(roles))
    return rows


# The session entry that carries a new key's secret from the create POST to the one GET
# that shows it.
NEW_KEY = "console.new_api_key"


def _reach_choices(roles) -> list[Scope]:
    """The scopes offered as a new key's reach: those the user administers, narrowest
    first (deepest in the tree, then by token), as the form asks for the narrowest that
    will do. None is preselected: the user chooses.

    Actors' own scopes are left out of the list: a key serves every actor whose chain holds
    its reach, and offering one scope per actor would swamp the choice (a posted actor
    scope the user administers is still accepted; the service decides).
    """
    scopes = Scope.objects.exclude(token__startswith="actor:").only(
        "id", "token", "label", "parent_id"
    )
    if roles is not None:
        scopes = scopes.filter(id__in=[i for i, role in roles.items() if role == Role.ADMIN])
    nodes = flatten_tree(scopes)
    return [node.item for node in sorted(nodes, key=lambda node: (-node.depth, node.item.token))]


def _filters(request) -> dict:
    state = request.GET.get("state", "")
    return {
        "state": state if state in STATES else "",
        "reach": request.GET.get("reach", "").strip()[:161],
    }


def _render_keys(
    request, *, created=None, secret=None, error=None, posted=None, fragment=None, status=200
):
    user = request.user
    roles = readable_scope_roles(user)
    visible = _visible(roles)
    filters = _filters(request)
    rows = visible
    if filters["state"]:
        rows = rows.filter(STATES[filters["state"]]())
    if filters["reach"]:
        rows = rows.filter(reach__token=filters["reach"])
    paginator = Paginator(rows.order_by("-created_at", "-id"), PAGE_SIZE)
    page = paginator.get_page(page_number(request.GET.get("page")))
    now = timezone.now()
    for key in page:
        key.state = keys.state_of(key, now)
        key.can_revoke = key.revoked_at is None and (
            roles is None or roles.get(key.reach_id) == Role.ADMIN
        )
    reaches = _reach_choices(roles)
    context = {
        "page": page,
        "page_range": paginator.get_elided_page_range(page.number, on_each_side=2, on_ends=1),
        "filters": filters,
        "states": list(STATES),
        "filtering": any(filters.values()),
        "reach_tokens": list(
            visible.order_by("reach__token").values_list("reach__token", flat=True).distinct()
        ),
        # The count of live keys per reach (the "keys per reach"), over every
        # visible key whatever the filters.
        "live_per_reach": list(
            visible.filter(_live())
            .values_list("reach__token")
            .annotate(n=Count("id"))
            .order_by("reach__token")
        ),
        "has_grants": roles is None or bool(roles),
        "reaches": reaches,
        "can_create": bool(reaches),
        "created": created,
        "secret": secret,
        "error": error,
        "posted": posted or {},
    }
    return render_page(request, "console/keys.html", context, fragment=fragment, status=status)


@console_view
@require_GET
def key_list(request):
    if wants_fragment(request):  # a filter or page of rows: the secret waits for the page
        return _render_keys(request, fragment="console/_key_rows.html")
    created = secret = None
    new_key = request.session.pop(NEW_KEY, None)
    if new_key:
        created = _visible(readable_scope_roles(request.user)).filter(uid=new_key["uid"]).first()
        secret = new_key["secret"] if created is not None else None
    response = _render_keys(request, created=created, secret=secret)
    if secret:
        add_never_cache_headers(response)  # Cache-Control: ... no-store ...
    return response


def _reach_to_create(user, principal, token: str) -> Scope:
    """The scope a new key will reach, if the user administers it.

    An unknown token and a scope outside the user's admin grants get one answer, a logged
    403, so the form cannot be used to find out which scopes exist. The service checks
    again when it creates the key.
    """
    token = token.strip()
    if not token:
        raise Invalid("choose the scope the key will reach")
    scope = Scope.objects.filter(token=token).first()
    if scope is None and user.is_superuser:
        raise Invalid(f"there is no scope {token}")
    if scope is None or role_for(user, scope) != Role.ADMIN:
        with access_log.refusals_logged(principal, "api_key.create", scope=token[:161]):
            raise Forbidden(f"you do not administer {token}")
    return scope


def _expiry(value: str):
    """The form's optional expiry date: the key stops working at the start of that day (in
    the server's time zone). Empty: never expires."""
    value = value.strip()
    if not value:
        return None
    try:
        day = parse_date(value)
    except ValueError:
        day = None
    if day is None:
        raise Invalid("the expiry must be a date (YYYY-MM-DD)")
    return timezone.make_aware(datetime.combine(day, time.min))


def _create_invalid(request, error):
    return _render_keys(request, error=error.message, posted=request.POST, status=422)


@post_only("console:keys")
@console_view(invalid=_create_invalid)
def key_create(request):
    principal = Principal.for_user(request.user)
    reach = _reach_to_create(request.user, principal, request.POST.get("reach", ""))
    key, secret = keys.create_api_key(
        request.POST.get("name", ""),
        reach,
        principal=principal,
        expires_at=_expiry(request.POST.get("expires", "")),
    )
    # Post/redirect/get: the next GET of the page shows the secret, once (key_list).
    request.session[NEW_KEY] = {"uid": key.uid, "secret": secret}
    response = redirect(f"{reverse('console:keys')}#new-key")
    response.status_code = 303  # See Other: the browser GETs the page, a reload GETs again
    add_never_cache_headers(response)
    return response


@post_only("console:keys")
@console_view
def key_revoke(request, uid):
    key = api_key_for_admin(request.user, uid)
    if key.revoked_at is not None:
        messages.info(request, f"The key {key.name} was already revoked.")
        return redirect("console:keys")
    keys.revoke_api_key(key, principal=Principal.for_user(request.user))
    messages.success(
        request, f"Revoked the key {key.name} (mc_{key.prefix}…): it is refused from now on."
    )
    return redirect("console:keys")


@post_only("console:keys")
@console_view
def key_pause(request, uid):
    key = api_key_for_admin(request.user, uid, action="api_key.pause")
    if key.revoked_at is not None:
        messages.info(request, f"The key {key.name} is revoked: there is nothing to pause.")
        return redirect("console:keys")
    keys.pause_api_key(key, principal=Principal.for_user(request.user))
    messages.success(
        request, f"Paused the key {key.name} (mc_{key.prefix}…): it is refused until resumed."
    )
    return redirect("console:keys")


@post_only("console:keys")
@console_view
def key_resume(request, uid):
    key = api_key_for_admin(request.user, uid, action="api_key.resume")
    if key.revoked_at is not None:
        messages.info(request, f"The key {key.name} is revoked: revocation cannot be undone.")
        return redirect("console:keys")
    keys.resume_api_key(key, principal=Principal.for_user(request.user))
    messages.success(request, f"Resumed the key {key.name} (mc_{key.prefix}…).")
    return redirect("console:keys")
