"""The actor search (`/actors/?q=&tenant=&team=&page=`): the actors a user may open, found
by a piece of their ref or name, by tenant, or by a team in their chain, a page at a time.
The scopes tree lists every actor's scope, which stops being usable past a few hundred."""

from django.views.decorators.http import require_GET

from memory_console.console.access import console_view, readable_scope_roles
from memory_console.console.forms import ActorSearch, page_number
from memory_console.console.rendering import render_page
from memory_core.accounts.principals import Principal
from memory_core.ledger import access_log
from memory_core.models import Actor

PAGE_SIZE = 50
COUNT_CAP = 10_000


def found_actors(user, f: dict):
    """The readable actors (an actor is readable when its own scope is) that match."""
    rows = Actor.objects.select_related("scope")
    roles = readable_scope_roles(user)
    if roles is not None:
        rows = rows.filter(scope_id__in=sorted(roles))
    if f["q"]:
        rows = rows.filter(ref__icontains=f["q"]) | rows.filter(display_name__icontains=f["q"])
    if f["tenant"]:
        rows = rows.filter(ref__startswith=f"{f['tenant']}/")
    if f["team"]:
        team = f["team"] if f["team"].startswith("team:") else f"team:{f['team']}"
        rows = rows.filter(memberships__scope__token=team)
    return rows.distinct()


@console_view
@require_GET
def actor_search(request):
    filters = ActorSearch(request.GET).values()
    rows = found_actors(request.user, filters)
    count = rows.order_by().values("id")[: COUNT_CAP + 1].count()
    pages = max(1, -(-min(count, COUNT_CAP) // PAGE_SIZE))
    page = min(page_number(request.GET.get("page")), pages)
    start = (page - 1) * PAGE_SIZE
    actors = list(rows.order_by("ref")[start : start + PAGE_SIZE])
    context = {
        "filters": filters,
        "filtering": any(filters.values()),
        "actors": actors,
        "count": count,
        "more_than_cap": count > COUNT_CAP,
        "count_cap": COUNT_CAP,
        "page": page,
        "pages": pages,
    }
    response = render_page(
        request, "console/actors.html", context, fragment="console/_actor_rows.html"
    )
    access_log.record(Principal.for_user(request.user), "actor.search", 200, count=len(actors))
    return response
