"""The actor page: its chain, every memory that applies to it, its conflicts, its recent
turns, and a preview of the block its agent would get now for a query."""

from dataclasses import dataclass

from django.views.decorators.http import require_GET

from memory_console.console.access import actor_for_reader, console_view, readable_scope_roles
from memory_console.console.forms import AUTHOR_COMBINATION_LABELS
from memory_console.console.rendering import render_page, wants_fragment
from memory_core import applied, audit, turns
from memory_core.actors import chain_of
from memory_core.errors import Invalid
from memory_core.models import Actor, Digest, Memory, Scope
from memory_core.permissions import role_for
from memory_core.principals import Principal

RECENT_TURNS = 10
PAGE = "console/actor.html"
PREVIEW = "console/_block_preview.html"


@dataclass(frozen=True)
class Applied:
    """One key as the actor sees it: the winning memory and the wider values it beats."""

    memory: Memory
    overrides: list[Memory]
    pinned: bool  # a pin anywhere in the chain makes the key always-on


@dataclass(frozen=True)
class Beaten:
    """A conflict in this actor's chain: the narrower value wins over the wider one."""

    narrow: Memory
    wide: Memory

    @property
    def authors(self) -> str:
        return f"{self.narrow.author}>{self.wide.author}"

    @property
    def authors_label(self) -> str:
        return AUTHOR_COMBINATION_LABELS[self.authors]


def _readable(user):
    """scope id -> may the user open pages at that scope (one query for the whole page)."""
    roles = readable_scope_roles(user)
    return lambda scope_id: roles is None or scope_id in roles


def _preview(request, actor: Actor, readable) -> tuple[dict, int]:
    """preview_turn's answer (which writes its own access-log row): never a stored digest."""
    query = request.GET.get("q", "")
    try:
        turn = turns.preview_turn(
            actor, principal=Principal.for_user(request.user), query=query or None
        )
    except Invalid as error:
        # htmx does not swap a 4xx answer into the page, so the fragment says it with a 200.
        status = 200 if wants_fragment(request) else 422
        return {"query": query, "turn": None, "error": error.message}, status
    scope_of = dict(Memory.objects.filter(uid__in=turn.memory_ids).values_list("uid", "scope_id"))
    linkable = {uid for uid, scope_id in scope_of.items() if readable(scope_id)}
    return {"query": query, "turn": turn, "linkable": linkable, "error": None}, 200


def _applied(chain) -> list[Applied]:
    memories = applied.chain_memories(chain)
    by_uid = {m.uid: m for m in memories}
    return [
        Applied(by_uid[e.id], [by_uid[o.id] for o in e.overrides], e.pinned)
        for e in applied.resolved(chain, memories)
    ]


def _conflicts(applied: list[Applied]) -> list[Beaten]:
    pairs = [Beaten(a.memory, wide) for a in applied for wide in a.overrides]
    # As on the conflicts page: an agent overriding a person first, then by key.
    return sorted(pairs, key=lambda b: (b.authors != "agent>human", b.narrow.key))


def _page_context(request, actor: Actor, readable) -> dict:
    chain = chain_of(actor)
    scopes = Scope.objects.in_bulk(chain, field_name="token")
    applied = _applied(chain)
    shown = [m for a in applied for m in (a.memory, *a.overrides)]
    return {
        "role": role_for(request.user, actor.scope),
        "chain": [
            {"token": token, "scope": scopes.get(token), "readable": readable(scopes[token].id)}
            for token in chain
            if token in scopes
        ],
        "applied": applied,
        "shown_uids": [m.uid for m in shown],
        "linkable": {m.uid for m in shown if readable(m.scope_id)},
        "readable_tokens": {m.scope.token for m in shown if readable(m.scope_id)},
        "conflicts": _conflicts(applied),
        "recent": list(
            Digest.objects.filter(actor=actor).order_by("-created_at", "-id")[:RECENT_TURNS]
        ),
    }


@console_view
@require_GET
def actor_detail(request, ref):
    actor = actor_for_reader(request.user, ref)
    readable = _readable(request.user)
    preview, status = _preview(request, actor, readable)
    context = {"actor": actor, "preview": preview}
    if wants_fragment(request):
        # The preview form's swap: only the block, and only preview_turn's log row.
        return render_page(request, PAGE, context, fragment=PREVIEW, status=status)
    context.update(_page_context(request, actor, readable))
    response = render_page(request, PAGE, context, status=status)
    audit.record(
        Principal.for_user(request.user),
        "actor.read",
        200,
        actor_ref=actor.ref,
        scope=actor.scope.token,
        memory_ids=context["shown_uids"],
        count=len(context["applied"]),
    )
    return response
