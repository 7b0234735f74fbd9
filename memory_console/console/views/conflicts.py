"""The conflicts page: every key answered at more than one scope of some actor's chain,
with the decisions a person may take about each pair inline.

Pairs whose two values are the same text are duplicates, not conflicts (nothing is
overridden): `?show=duplicates` lists them apart, with one remedy, retiring the narrower
copy (an invalidation that names the wider value it repeats)."""

from dataclasses import dataclass, field

from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from memory_console.console import actions
from memory_console.console.access import (
    console_view,
    memory_for_reader,
    reached_actor_tokens,
    readable_scope_roles,
)
from memory_console.console.actions import Notice, error_text, htmx_action, safe_next
from memory_console.console.forms import (
    AUTHOR_COMBINATION_LABELS,
    ConflictFilter,
    page_number,
)
from memory_console.console.memory_page import render_memory
from memory_console.console.rendering import render_page, wants_fragment
from memory_core.accounts.principals import Principal
from memory_core.conflicts import Conflict, conflicts_page
from memory_core.errors import NotFound
from memory_core.ledger import access_log
from memory_core.models import Actor, Membership, Scope
from memory_core.models.access import Role
from memory_core.rules.chain import resolve_chain
from memory_core.rules.scopes import GLOBAL
from memory_core.visibility import MEMORY_ID_RE
from memory_core.writes import promotion_targets

# Each conflict row carries its two values and their forms (resolve, republish, retire):
# 25 a page keeps the page's HTML and its rendering small (issue 19).
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


class _Roles:
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


def _row(conflict: Conflict, roles: _Roles) -> Row:
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


def _filter_scope(token: str, roles: _Roles) -> tuple[Scope | None, bool]:
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


def _scope_choices(roles: _Roles, current: str) -> list[str]:
    scopes = Scope.objects.exclude(token__startswith="actor:")
    if roles.roles is not None:
        scopes = scopes.filter(id__in=list(roles.roles)) | scopes.filter(token=GLOBAL)
    tokens = sorted(scopes.values_list("token", flat=True), key=lambda t: (t != GLOBAL, t))
    if current and current not in tokens:
        tokens.append(current)  # an actor scope from a link, or a token typed in the URL
    return tokens


@console_view
@require_GET
def conflict_list(request):
    roles = _Roles(request.user)
    filters = ConflictFilter(request.GET).values()
    scope, matchable = _filter_scope(filters["scope"], roles)
    duplicates = filters["show"] == "duplicates"
    others = 0  # how many pairs of the other kind match the same filters
    if matchable:
        reach = reached_actor_tokens(roles.roles)
        number = page_number(request.GET.get("page"))
        items, page, others = _fetch(
            reach, scope, filters["authors"], number, duplicates=duplicates
        )
    else:
        items, page = [], Paginator([], PAGE_SIZE).get_page(1)
    roles.prefetch([c.narrow for c in items])
    rows = [_row(c, roles) for c in items]
    shown = [m for c in items for m in (c.narrow, c.wide)]
    context = {
        "rows": rows,
        "page": page,
        "linkable": {m.uid for m in shown if roles.reads(m.scope)},
        "readable_tokens": {m.scope.token for m in shown if roles.reads(m.scope)},
        "page_range": page.paginator.get_elided_page_range(page.number, on_each_side=2, on_ends=1),
        "filters": filters,
        "filtering": bool(filters["scope"] or filters["authors"]),
        "duplicates": duplicates,
        "others": others,
        "scope_choices": _scope_choices(roles, filters["scope"]),
        "author_choices": AUTHOR_COMBINATION_LABELS,
        "here": request.get_full_path(),
    }
    response = render_page(
        request, "console/conflicts.html", context, fragment="console/_conflict_rows.html"
    )
    access_log.record(
        Principal.for_user(request.user),
        "conflicts.read",
        200,
        scope=filters["scope"] or None,
        memory_ids=list(dict.fromkeys(m.uid for m in shown)),
        count=len(rows),
    )
    return response


# --- a row's inline decisions -------------------------------------------------------------
# `/conflicts/<narrow uid>/<wide uid>/republish/` and `…/invalidate/`: the row's own
# endpoints. They act on the narrower memory through the same services as its page; htmx
# gets the row's result in its place (_conflict_done.html), a plain POST a redirect back to
# the list (`next`) with a flash message.


def _row_context(request, narrow, wide, memory, notice, *, new=None) -> dict:
    return {
        "row_id": f"conflict-{narrow}-{wide}",
        "notice": notice,
        "memory": memory,
        "new": new,
        "back": safe_next(request) or reverse("console:conflicts"),
    }


def _row_refused(request, error, narrow, wide):
    try:
        # The refusal being answered was logged; this only asks what may be shown.
        memory = memory_for_reader(request.user, narrow, action=None)
    except NotFound:
        memory = None
    notice = Notice("error", error_text(error, readable=memory is not None))
    return render(
        request, "console/_conflict_done.html", _row_context(request, narrow, wide, memory, notice)
    )


def _row_invalid(request, error, narrow, wide):
    """A plain POST's bad value: the memory page, the message beside its form (as there)."""
    memory = memory_for_reader(request.user, narrow)
    action = request.resolver_match.url_name.removeprefix("conflict-")
    return render_memory(
        request, memory, errors={action: error.message}, posted={action: request.POST}, status=422
    )


def _row_done(request, narrow, wide, memory, message, *, new=None):
    if not wants_fragment(request):
        messages.success(request, message)
        return redirect(safe_next(request) or reverse("console:conflicts"))
    context = _row_context(request, narrow, wide, memory, Notice("success", message), new=new)
    return render(request, "console/_conflict_done.html", context)


def _narrower(request, narrow, wide):
    if not (MEMORY_ID_RE.fullmatch(narrow) and MEMORY_ID_RE.fullmatch(wide)):
        raise NotFound("conflict not found")
    action = request.resolver_match.url_name.removeprefix("conflict-")
    return memory_for_reader(
        request.user, narrow, action="promote" if action == "republish" else action
    )


@htmx_action(page="console:conflicts", refused=_row_refused, invalid=_row_invalid)
def conflict_republish(request, narrow, wide):
    memory = _narrower(request, narrow, wide)
    new, message = actions.republish(request, memory)
    return _row_done(request, narrow, wide, memory, message, new=new)


@htmx_action(page="console:conflicts", refused=_row_refused, invalid=_row_invalid)
def conflict_invalidate(request, narrow, wide):
    memory = _narrower(request, narrow, wide)
    return _row_done(request, narrow, wide, memory, actions.invalidate(request, memory))
