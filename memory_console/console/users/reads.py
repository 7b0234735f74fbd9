"""What the Users page reads: console users (searched by username, paged) with their
grants, and what the grant form offers."""

from django.contrib.auth import get_user_model
from django.core.paginator import Paginator
from django.db.models import Prefetch

from memory_console.console.common.forms import PAGE_SIZE
from memory_core.errors import NotFound
from memory_core.models import Scope, ScopeGrant


def listing(query: str, number: int) -> dict:
    """Page `number` of the users whose username holds `query`, each with its grants; every
    username and every scope the grant form offers."""
    people = get_user_model().objects.order_by("username")
    if query:
        people = people.filter(username__icontains=query)
    paginator = Paginator(
        people.prefetch_related(
            Prefetch(
                "scope_grants",
                queryset=ScopeGrant.objects.select_related("scope").order_by("scope__token"),
            )
        ),
        PAGE_SIZE,
    )
    page = paginator.get_page(number)
    return {
        "page": page,
        "page_range": paginator.get_elided_page_range(page.number, on_each_side=2, on_ends=1),
        # The grant form offers every user, whatever page of the list is shown.
        "usernames": list(
            get_user_model().objects.order_by("username").values_list("username", flat=True)
        ),
        # Offered in the grant form's list; an actor's own scope may still be typed in.
        "scope_tokens": list(
            Scope.objects.exclude(token__startswith="actor:").values_list("token", flat=True)
        ),
    }


def person(username: str):
    """The user `username` (for a superuser, who sees every user), or NotFound."""
    found = get_user_model().objects.filter(username=username).first()
    if found is None:
        raise NotFound(f"no user {username!r}")
    return found
