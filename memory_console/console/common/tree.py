"""The scope tree as the scopes page shows it: readable scopes, nested, in reading order.

A pure function over (id, parent id, token) so it can be tested without a database. A
readable scope whose parent is not readable (an admin of tenant:acme does not read
`global`) becomes a root of the tree the user sees.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

MAX_INDENT = 8  # deeper levels share the last indentation step (see console.css)


@dataclass(frozen=True)
class Node:
    item: Any
    depth: int

    @property
    def indent(self) -> int:
        return min(self.depth, MAX_INDENT)


def flatten_tree(items: Iterable[Any]) -> list[Node]:
    """Depth-first, children ordered by token; `items` need `.id`, `.parent_id`, `.token`."""
    items = list(items)
    ids = {item.id for item in items}
    children: dict[Any, list[Any]] = {}
    roots = []
    for item in items:
        if item.parent_id in ids and item.parent_id != item.id:
            children.setdefault(item.parent_id, []).append(item)
        else:
            roots.append(item)
    out: list[Node] = []
    seen: set[Any] = set()
    stack = [(item, 0) for item in sorted(roots, key=_order, reverse=True)]
    while stack:
        item, depth = stack.pop()
        if item.id in seen:
            continue
        seen.add(item.id)
        out.append(Node(item, depth))
        for child in sorted(children.get(item.id, ()), key=_order, reverse=True):
            stack.append((child, depth + 1))
    # A cycle (never expected: the tree hangs from `global`) would leave rows unreached;
    # show them at the top level rather than hide them.
    out.extend(Node(item, 0) for item in sorted(items, key=_order) if item.id not in seen)
    return out


def _order(item) -> tuple:
    # `global` first, then the scopes an administrator thinks in (tenants, teams), actors last.
    return (item.token != "global", item.token.startswith("actor:"), item.token)
