"""What the API keys page reads: the keys a user may see (every key whose reach one of
their grants reaches; a superuser's, every key), filtered and paged, the live ones counted
per reach, and the scopes a new key may reach."""

from django.core.paginator import Paginator
from django.db.models import Count, Q
from django.utils import timezone

from memory_console.console.common.access import readable_scope_roles
from memory_console.console.common.forms import PAGE_SIZE
from memory_console.console.common.tree import flatten_tree
from memory_core.accounts import keys
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


def visible_key(user, uid: str) -> ApiKey | None:
    """Key `uid` if the user may see it."""
    return _visible(readable_scope_roles(user)).filter(uid=uid).first()


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


def listing(user, filters: dict, number: int) -> dict:
    """Page `number` of the visible keys the filters match, newest first, each with its
    state and whether the user may revoke it; the reaches to filter by; the live keys per
    reach; the scopes a new key may reach."""
    roles = readable_scope_roles(user)
    visible = _visible(roles)
    rows = visible
    if filters["state"]:
        rows = rows.filter(STATES[filters["state"]]())
    if filters["reach"]:
        rows = rows.filter(reach__token=filters["reach"])
    paginator = Paginator(rows.order_by("-created_at", "-id"), PAGE_SIZE)
    page = paginator.get_page(number)
    now = timezone.now()
    for key in page:
        key.state = keys.state_of(key, now)
        key.can_revoke = key.revoked_at is None and (
            roles is None or roles.get(key.reach_id) == Role.ADMIN
        )
    reaches = _reach_choices(roles)
    return {
        "page": page,
        "page_range": paginator.get_elided_page_range(page.number, on_each_side=2, on_ends=1),
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
    }
