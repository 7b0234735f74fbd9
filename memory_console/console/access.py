"""Access-scoped lookups and the console's permission decorator (STYLE, "Access-scoped lookups").

Console views never call a bare `get_object_or_404`: they go through these helpers, which
encode who may see what, so a missing check is a missing helper call, visible in review.
Something outside a user's grants is a 404, never a 403: a 403 would confirm it exists.

What a user may *do* is decided by the memory_core services (each raises Forbidden and
writes the refusal to the access log); `console_view` turns those DomainErrors into pages.
"""

from functools import wraps

from django.contrib.auth.decorators import login_required
from django.db import connection
from django.shortcuts import render

from memory_core.errors import DomainError, Invalid, NotFound
from memory_core.models import Memory, Scope
from memory_core.models.access import Role
from memory_core.permissions import role_for


def scope_for_reader(user, token: str) -> Scope:
    """The scope `token` if any of the user's grants reaches it, else NotFound."""
    scope = Scope.objects.select_related("parent").filter(token=token).first()
    if scope is None or role_for(user, scope) is None:
        raise NotFound("scope not found")
    return scope


def memory_for_reader(user, uid: str) -> Memory:
    """Any version of memory `uid` (live or retired) if the user may read its scope."""
    memory = (
        Memory.objects.select_related("scope", "origin_actor", "supersedes", "promoted_from__scope")
        .filter(uid=uid)
        .first()
    )
    if memory is None or role_for(user, memory.scope) is None:
        raise NotFound("memory not found")
    return memory


# The scopes a user's grants reach, with the role each grant carries. It mirrors
# permissions.role_for for every scope at once: a grant on S reaches S and every scope
# below it in the tree, plus the own scope of every actor with a membership at S (an
# actor's chain may name a scope outside the branch its own scope hangs in). UNION
# (not UNION ALL) keeps the recursion finite even if the tree ever held a cycle.
_READABLE_SQL = """
WITH RECURSIVE reach(id, role) AS (
    SELECT g.scope_id, g.role FROM memory_core_scopegrant g WHERE g.user_id = %(user)s
    UNION
    SELECT s.id, r.role FROM memory_core_scope s JOIN reach r ON s.parent_id = r.id
)
SELECT id, role FROM reach
UNION
SELECT a.scope_id, g.role
FROM memory_core_scopegrant g
JOIN memory_core_membership m ON m.scope_id = g.scope_id
JOIN memory_core_actor a ON a.id = m.actor_id
WHERE g.user_id = %(user)s
"""


def readable_scope_roles(user) -> dict[int, str] | None:
    """{scope id: strongest role} for every scope the user reads; None means "all" (superuser).

    One query, however many grants and scopes: the scope tree page must not ask role_for
    once per scope.
    """
    if user is None or not user.is_authenticated or not user.is_active:
        return {}
    if user.is_superuser:
        return None
    roles: dict[int, str] = {}
    with connection.cursor() as cursor:
        cursor.execute(_READABLE_SQL, {"user": user.pk})
        for scope_id, role in cursor.fetchall():
            if roles.get(scope_id) != Role.ADMIN:
                roles[scope_id] = role
    return roles


STATUS_TITLES = {
    403: "Not allowed",
    404: "Not found",
    422: "That did not work",
}


def error_page(request, error: DomainError):
    """The page for a refusal. Forbidden was already written to the access log by the
    service that raised it; a 404 says only "not found", whatever the reason."""
    status = error.status if error.status in STATUS_TITLES else 400
    message = "Nothing here, or nothing you may see." if status == 404 else error.message
    context = {"status": status, "title": STATUS_TITLES.get(status, "Refused"), "message": message}
    return render(request, "console/error.html", context, status=status)


def console_view(view=None, *, invalid=None):
    """Login required; memory_core refusals become pages.

    Forbidden -> 403 page, NotFound -> 404 page, Invalid -> `invalid(request, error, ...)`
    (a view that re-renders the form with the message, status 422), or a plain 422 page.
    Anonymous users are sent to /login/.
    """

    def decorate(func):
        @wraps(func)
        def wrapped(request, *args, **kwargs):
            try:
                return func(request, *args, **kwargs)
            except Invalid as error:
                if invalid is None:
                    return error_page(request, error)
                try:
                    return invalid(request, error, *args, **kwargs)
                except DomainError as again:
                    return error_page(request, again)
            except DomainError as error:
                return error_page(request, error)

        return login_required(wrapped)

    return decorate(view) if view is not None else decorate
