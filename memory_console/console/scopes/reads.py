"""What the scopes pages read: the scope tree (readable scopes, nested, opened on demand),
a search of it by name, and one scope's live memories, filtered and ranked."""

from django.core.paginator import Paginator
from django.db import connection
from django.db.models import Exists, F, Func, OuterRef, Q

from memory_console.console.common.access import not_found
from memory_console.console.common.forms import PAGE_SIZE
from memory_console.console.common.tree import MAX_INDENT, Node, flatten_tree
from memory_core.accounts.permissions import readable_scope_roles
from memory_core.actors import ancestors
from memory_core.models import Memory, Scope
from memory_core.models.access import Role
from memory_core.recall import search
from memory_core.rules.scopes import GLOBAL
from memory_core.summaries import LiveCount, live_counts

# The scope tree is shown lazily: at a million memories it holds 10,000 actors.
# `global` shows its children (the tenants, and scopes outside every tenant) each closed; a
# closed scope opens on demand, with a plain link (`?open=<token>`, the page with that
# scope's subtree shown under it) or, with htmx, the same address answering only the rows
# of that scope and its subtree in place of its row. The root of the user's tree, when it
# is not `global` and is the only one, and the scope `?open=` names, show their whole
# subtree, up to SUBTREE_ROWS rows; several roots (grants at several tenants) are each
# closed, like `global`'s children. `?q=` searches by name instead of showing the tree.
SUBTREE_ROWS = 200
SEARCH_ROWS = 100

_SUBTREE_SQL = """
WITH RECURSIVE below AS (
    SELECT id FROM memory_core_scope WHERE parent_id = %s
    UNION ALL
    SELECT s.id FROM memory_core_scope s JOIN below b ON s.parent_id = b.id
)
SELECT id FROM below
"""


def _scopes():
    return Scope.objects.select_related("actor").only(
        "id", "token", "label", "parent_id", "actor__display_name", "actor__ref"
    )


def _with_children(scopes):
    return scopes.annotate(has_children=Exists(Scope.objects.filter(parent=OuterRef("pk"))))


def _rows(nodes, roles, *, base_indent=0, opened=None, closed_ids=frozenset()) -> list[dict]:
    return [
        {
            "scope": node.item,
            "indent": min(base_indent + node.indent, MAX_INDENT),
            "role": Role.ADMIN if roles is None else roles[node.item.id],
            "closed": node.item.id in closed_ids,
            "open": node.item.id == opened,
        }
        for node in nodes
    ]


def counted(rows: list[dict]) -> list[dict]:
    """Every shown scope's live counts, from one read of the kept table."""
    counts = live_counts([row["scope"].id for row in rows if "scope" in row])
    for row in rows:
        if "scope" in row:
            row["counts"] = counts.get(row["scope"].id, LiveCount())
    return rows


def _subtree(scope: Scope, roles) -> tuple[list[Node], int]:
    """The scopes below `scope` the user reads, as a tree (at most SUBTREE_ROWS of them),
    and how many there are in all."""
    with connection.cursor() as cursor:
        cursor.execute(_SUBTREE_SQL, [scope.id])
        ids = [row[0] for row in cursor]
    if roles is not None:
        ids = [i for i in ids if i in roles]
    nodes = flatten_tree(_scopes().filter(id__in=ids))
    return [Node(n.item, n.depth + 1) for n in nodes[:SUBTREE_ROWS]], len(nodes)


def open_scope(user, token: str, roles) -> Scope | None:
    """The scope `?open=` names; one the user does not read is not found (404), as on its
    own page: the tree never says whether a scope it does not show exists."""
    if not token:
        return None
    scope = _scopes().filter(token=token).first()
    if scope is None or not (roles is None or scope.id in roles):
        raise not_found(user, "scope.read", "scope not found", scope=token)
    return scope


def tree(roles, opened: Scope | None) -> tuple[list[dict], dict]:
    """The rows of the tree, and what was left out of an open scope's subtree."""
    readable = _scopes() if roles is None else _scopes().filter(id__in=list(roles))
    roots = [n.item for n in flatten_tree(_with_children(readable.filter(_roots(roles))))]
    # A scope deeper down opens with the child of `global` it hangs under.
    path = {s.id for s in ancestors(opened)} if opened is not None else set()
    rows: list[dict] = []
    more: dict = {}
    for root in roots:
        if root.token == GLOBAL:
            rows += _rows([Node(root, 0)], roles)
            children = _with_children(readable.filter(parent=root))
            for node in flatten_tree(children):
                child = node.item
                if child.id in path:
                    rows += opened_rows(child, roles, 1, more)
                else:
                    closed = {child.id} if child.has_children else set()
                    rows += _rows([Node(child, 1)], roles, closed_ids=closed)
            continue
        if len(roots) == 1 or root.id in path or not root.has_children:
            rows += opened_rows(root, roles, 0, more)
        else:
            # Several roots (grants at several tenants): each closed, as under `global`.
            rows += _rows([Node(root, 0)], roles, closed_ids={root.id})
    return rows, more


def opened_rows(scope: Scope, roles, indent: int, more: dict) -> list[dict]:
    nodes, total = _subtree(scope, roles)
    if total > len(nodes):
        more[scope.id] = total - len(nodes)
    rows = _rows([Node(scope, 0), *nodes], roles, base_indent=indent, opened=scope.id)
    if scope.id in more:
        rows.append({"more_of": scope, "more": more[scope.id], "indent": indent + 1})
    return rows


def _roots(roles):
    """The roots of what the user reads: `global` for whoever reads it, else each readable
    scope whose parent is not readable."""
    if roles is None:
        return Q(token=GLOBAL)
    return ~Q(parent_id__in=list(roles)) | Q(parent__isnull=True)


def search_scopes(roles, q: str) -> tuple[list[dict], int]:
    found = _scopes().filter(
        Q(token__icontains=q)
        | Q(label__icontains=q)
        | Q(actor__ref__icontains=q)
        | Q(actor__display_name__icontains=q)
    )
    if roles is not None:
        found = found.filter(id__in=list(roles))
    total = found.count()
    page = list(found.order_by("token")[:SEARCH_ROWS])
    return counted(_rows([Node(s, 0) for s in page], roles)), total


# --- one scope ------------------------------------------------------------------------------

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


def scope_tags(scope: Scope) -> list[str]:
    return list(
        Memory.objects.live()
        .filter(scope=scope)
        .annotate(tag=Func(F("tags"), function="unnest"))
        .values_list("tag", flat=True)
        .distinct()
        .order_by("tag")
    )


def live_memories(scope: Scope, filters: dict, number: int):
    """Page `number` of the scope's live memories that match the filters (the last page
    past the end)."""
    return Paginator(_filtered(scope, filters), PAGE_SIZE).get_page(number)


def trail(user, scope: Scope) -> list[dict]:
    """The scopes above `scope`, widest first, each marked readable (its chip links to the
    scope page) or not."""
    readable = readable_scope_roles(user)
    return [
        {"scope": s, "readable": readable is None or s.id in readable}
        for s in reversed(ancestors(scope)[1:])
    ]
