"""What the actor pages read: the actors a user may open, found by search; and one actor's
applied set (every memory that applies to it, overrides shown), its conflicts, its chain
and its recent turns."""

from dataclasses import dataclass

from django.core.paginator import Paginator

from memory_console.console.common.access import readable_scope_roles
from memory_console.console.conflicts.forms import AUTHOR_COMBINATION_LABELS
from memory_core import applied
from memory_core.models import Actor, Digest, Memory, Scope

# The actor search: actors a page, and where its count stops.
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


def search_page(user, filters: dict, number: int) -> dict:
    """Page `number` of the actors that match (the last page past the end), by ref."""
    rows = found_actors(user, filters)
    count = rows.order_by().values("id")[: COUNT_CAP + 1].count()
    pages = max(1, -(-min(count, COUNT_CAP) // PAGE_SIZE))
    page = min(number, pages)
    start = (page - 1) * PAGE_SIZE
    return {
        "actors": list(rows.order_by("ref")[start : start + PAGE_SIZE]),
        "count": count,
        "more_than_cap": count > COUNT_CAP,
        "count_cap": COUNT_CAP,
        "page": page,
        "pages": pages,
    }


# --- one actor ------------------------------------------------------------------------------

RECENT_TURNS = 10

# The applied set and the conflicts are paged: an actor of the benchmark's organisation
# has ~540 keys, and rendering them all made a 350 KiB page. Each list pages on
# its own (`?keys=N`, `?conflicts=N`); without JavaScript the links load the page, with htmx
# they swap their section alone (hx-target names it, and the view renders only that).
APPLIED_PAGE = 50
CONFLICTS_PAGE = 10


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


def readable_for(user):
    """scope id -> may the user open pages at that scope (one query for the whole page)."""
    roles = readable_scope_roles(user)
    return lambda scope_id: roles is None or scope_id in roles


def linkable(uids, readable) -> set[str]:
    """The memories among `uids` whose scope the user may open (a block preview's lines)."""
    scope_of = dict(Memory.objects.filter(uid__in=uids).values_list("uid", "scope_id"))
    return {uid for uid, scope_id in scope_of.items() if readable(scope_id)}


def _conflict_pairs(entries) -> list[tuple]:
    """(narrow record, wide record) for every value a narrower one beats; as on the
    conflicts page: an agent overriding a person first, then by key."""
    pairs = [(e.winner, wide) for e in entries for wide in e.overrides]
    return sorted(pairs, key=lambda p: (f"{p[0].author}>{p[1].author}" != "agent>human", p[0].key))


def sections(chain, readable, numbers: dict, only: str | None = None) -> dict:
    """The applied set and the conflicts, page `numbers["keys"]` and
    `numbers["conflicts"]` of each (or of `only`), resolved from the chain's records; model
    objects are read for the rows on screen alone. The pages are `keys_page` and
    `conflicts_page`, for the view's pagers."""
    entries = applied.chain_entries(chain)
    context = {"applied_count": len(entries)}
    pairs = _conflict_pairs(entries)
    context["conflict_count"] = len(pairs)
    wanted: set[str] = set()
    if only in (None, "applies"):
        keys = Paginator(entries, APPLIED_PAGE).get_page(numbers["keys"])
        wanted |= {r.id for e in keys for r in (e.winner, *e.overrides)}
    if only in (None, "conflicts"):
        beaten = Paginator(pairs, CONFLICTS_PAGE).get_page(numbers["conflicts"])
        wanted |= {r.id for pair in beaten for r in pair}
    by_uid = (
        Memory.objects.select_related("scope", "origin_actor")
        .defer("search")
        .in_bulk(sorted(wanted), field_name="uid")
    )
    # A memory forgotten between the two reads is simply not shown.
    if only in (None, "applies"):
        context["applied"] = [
            Applied(
                by_uid[e.winner.id], [by_uid[o.id] for o in e.overrides if o.id in by_uid], e.pinned
            )
            for e in keys
            if e.winner.id in by_uid
        ]
        context["keys_page"] = keys
    if only in (None, "conflicts"):
        context["conflicts"] = [
            Beaten(by_uid[n.id], by_uid[w.id]) for n, w in beaten if {n.id, w.id} <= by_uid.keys()
        ]
        context["conflicts_page"] = beaten
    shown = list(by_uid.values())
    context["shown_uids"] = sorted(by_uid)
    context["linkable"] = {m.uid for m in shown if readable(m.scope_id)}
    context["readable_tokens"] = {m.scope.token for m in shown if readable(m.scope_id)}
    return context


def page_context(actor: Actor, chain: list[str], readable) -> dict:
    """The actor page beyond its sections: its chain, each scope marked readable, and its
    recent turns."""
    scopes = Scope.objects.in_bulk(chain, field_name="token")
    return {
        "chain": [
            {"token": token, "scope": scopes.get(token), "readable": readable(scopes[token].id)}
            for token in chain
            if token in scopes
        ],
        # The list shows each turn's query and stats: its block and entries stay behind.
        "recent": list(
            Digest.objects.filter(actor=actor)
            .defer("block", "entries")
            .order_by("-created_at", "-id")[:RECENT_TURNS]
        ),
    }
