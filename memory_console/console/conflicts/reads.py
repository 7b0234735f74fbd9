"""What the conflicts page reads: a page of conflicts (or of duplicates) within the user's
reach, and for each row what the user may decide about it."""

from dataclasses import dataclass, field

from django.core.paginator import Paginator

from memory_console.console.common.access import reached_actor_tokens, readable_scope_roles
from memory_console.console.conflicts.forms import AUTHOR_COMBINATION_LABELS
from memory_core.conflicts import Conflict, conflicts_page
from memory_core.models import Actor, Membership, Scope
from memory_core.models.access import Role
from memory_core.rules.chain import resolve_chain
from memory_core.rules.scopes import GLOBAL
from memory_core.writes import promotion_targets

# Each conflict row carries its two values and their forms (resolve, republish, retire):
# 25 a page keeps the page's HTML and its rendering small.
PAGE_SIZE = 25


@dataclass
class Row:
    conflict: Conflict
    can_invalidate: bool = False
    # The wider value's own scope when the narrower one can be republished right there;
    # otherwise the wider scopes the user administers, to choose from.
    republish_to: Scope | None = None
    targets: list[Scope] = field(default_factory=list)

    @property
    def authors_label(self) -> str:
        return AUTHOR_COMBINATION_LABELS[self.conflict.authors]

    @property
    def duplicate_reason(self) -> str:
        wide = self.conflict.wide
        return f"duplicate: the same value is held at {wide.scope.token} ({wide.uid})"

    @property
    def can_act(self) -> bool:
        return self.can_invalidate or self.republish_to is not None or bool(self.targets)


class Roles:
    """What the user may do where, from one readable_scope_roles query."""

    def __init__(self, user):
        self.roles = readable_scope_roles(user)
        self.administers_any = self.roles is None or Role.ADMIN in self.roles.values()
        self._targets: dict[int, list[Scope]] = {}

    def reads(self, scope: Scope) -> bool:
        return self.roles is None or scope.id in self.roles

    def administers(self, scope: Scope) -> bool:
        return self.roles is None or self.roles.get(scope.id) == Role.ADMIN

    def prefetch(self, memories) -> None:
        """The promotion targets of every actor-scope memory of a page, in three queries
        (writes.promotion_targets answers one memory at a time, in three of its own)."""
        wanted = {
            m.scope_id: m
            for m in memories
            if m.scope_id not in self._targets and m.scope.token.startswith("actor:")
        }
        if not self.administers_any or not wanted:
            return
        owners = {a.scope_id: a for a in Actor.objects.filter(scope_id__in=list(wanted))}
        tokens: dict[int, list[str]] = {a.id: [] for a in owners.values()}
        rows = (
            Membership.objects.filter(actor_id__in=list(tokens))
            .order_by("actor_id", "rank")
            .values_list("actor_id", "scope__token")
        )
        for actor_id, token in rows:
            tokens[actor_id].append(token)
        chains = {sid: resolve_chain(a.ref, tokens[a.id])[1:] for sid, a in owners.items()}
        every = {t for chain in chains.values() for t in chain}
        by_token = {s.token: s for s in Scope.objects.filter(token__in=list(every))}
        for scope_id, chain in chains.items():
            self._targets[scope_id] = [
                by_token[t] for t in chain if t in by_token and self.administers(by_token[t])
            ]

    def targets(self, memory) -> list[Scope]:
        # promotion_targets depends on the scope alone; a page repeats few narrow scopes.
        if memory.scope_id not in self._targets:
            self._targets[memory.scope_id] = [
                s for s in promotion_targets(memory) if self.administers(s)
            ]
        return self._targets[memory.scope_id]


def _row(conflict: Conflict, roles: Roles) -> Row:
    narrow, wide = conflict.narrow, conflict.wide
    row = Row(conflict)
    if not roles.administers_any:
        return row
    row.can_invalidate = roles.administers(narrow.scope)
    targets = roles.targets(narrow)
    row.republish_to = next((s for s in targets if s.pk == wide.scope_id), None)
    if row.republish_to is None:
        row.targets = targets
    return row


def _filter_scope(token: str, roles: Roles) -> tuple[Scope | None, bool]:
    """(scope to filter by, whether the filter can match anything). An unknown token and one
    outside the user's grants look the same: nothing matches. `global` is in every chain."""
    if not token:
        return None, True
    scope = Scope.objects.filter(token=token).first()
    if scope is None or not (scope.token == GLOBAL or roles.reads(scope)):
        return None, False
    return scope, True


def _fetch(reach, scope, authors, number: int, *, duplicates: bool = False):
    """One page of conflicts (or of duplicates), its Paginator page, and how many pairs of
    the other kind match; past the end, the last page."""
    kept = {"reach_tokens": reach, "scope": scope, "authors": authors or None}

    def fetch(n):
        return conflicts_page(
            **kept, duplicates=duplicates, limit=PAGE_SIZE, offset=(n - 1) * PAGE_SIZE
        )

    items, total, others = fetch(number)
    if not items and total and number > 1:
        number = max(1, -(-total // PAGE_SIZE))
        items, total, others = fetch(number)
    # A Paginator over a range gives the page links without holding any rows.
    page = Paginator(range(total), PAGE_SIZE).get_page(number)
    return items, page, others


def _scope_choices(roles: Roles, current: str) -> list[str]:
    scopes = Scope.objects.exclude(token__startswith="actor:")
    if roles.roles is not None:
        scopes = scopes.filter(id__in=list(roles.roles)) | scopes.filter(token=GLOBAL)
    tokens = sorted(scopes.values_list("token", flat=True), key=lambda t: (t != GLOBAL, t))
    if current and current not in tokens:
        tokens.append(current)  # an actor scope from a link, or a token typed in the URL
    return tokens


def listing(user, filters: dict, number: int) -> dict:
    """Page `number` of the pairs the filters match, as rows with their decisions; how
    many pairs of the other kind (conflicts or duplicates) match the same filters; which
    memories and scopes the user may open; the scopes the filter offers."""
    roles = Roles(user)
    scope, matchable = _filter_scope(filters["scope"], roles)
    duplicates = filters["show"] == "duplicates"
    others = 0  # how many pairs of the other kind match the same filters
    if matchable:
        reach = reached_actor_tokens(roles.roles)
        items, page, others = _fetch(
            reach, scope, filters["authors"], number, duplicates=duplicates
        )
    else:
        items, page = [], Paginator([], PAGE_SIZE).get_page(1)
    roles.prefetch([c.narrow for c in items])
    rows = [_row(c, roles) for c in items]
    shown = [m for c in items for m in (c.narrow, c.wide)]
    return {
        "rows": rows,
        "page": page,
        "shown": shown,
        "linkable": {m.uid for m in shown if roles.reads(m.scope)},
        "readable_tokens": {m.scope.token for m in shown if roles.reads(m.scope)},
        "duplicates": duplicates,
        "others": others,
        "scope_choices": _scope_choices(roles, filters["scope"]),
    }
