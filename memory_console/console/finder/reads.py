"""The memory finder's query (`/memories/`): every memory a user may read, filtered; and
the scopes a bulk republish may choose from.

Privacy first: the rows are cut to the readable scopes (readable_scope_roles; a superuser
reads all) before any other filter, so a memory outside the grants is in no row and no
count. Then the filters, each one index-friendly at a million rows:

- words: lexical, over the stored tsvector (memory_search_gin), across any number of
  scopes; the agents' hybrid rank (search.ranked_chain: words and meaning) only when the
  scope filter names one scope and the state is live — vectors are compared inside one
  chain, never across tenants;
- state: live = not retired and not expired; superseded / invalidated = retired_reason;
  expired = not retired but past expires_at; any = every version;
- every order is an index's (memory_recent_idx: created_at, id; memory_key_recent_idx),
  and so is each selective filter (pinned, retired by reason, expired, tags, kind as
  scope ids), and the count stops at COUNT_CAP + 1 ("more than 1,000"), so neither a count nor a
  page ever walks every row.

The cap was 10,000 until the bench measured the finder at a million memories:
counting a common word's matches to 10,001 read that many heap rows, cold, and made the
page's p99 376 ms. Counting to 1,001 reads a tenth; past the cap the pager still goes on
(`next ›` while the page is full) up to MAX_PAGE, whose offset a page never passes.
"""

from dataclasses import dataclass
from datetime import datetime, time, timedelta

from django.contrib.postgres.search import SearchQuery
from django.db.models.functions import Now
from django.utils import timezone

from memory_core.accounts.permissions import readable_scope_roles, role_for
from memory_core.models import Memory, RetiredReason, Scope
from memory_core.models.memories import TS_CONFIG
from memory_core.recall import search
from memory_core.writes import promotion_targets

PAGE_SIZE = 50
COUNT_CAP = 1_000
# The deepest page offered (an offset of 10,000 rows at most): narrow the filters instead.
MAX_PAGE = 200
# A hybrid search at one scope shows its best this many, ranked (as the scope page does).
RANKED_RESULTS = 100
# A kind filter with at most this many scopes is applied as their ids.
KIND_IDS_MAX = 2000

SORTS = {
    "new": ("-created_at", "-id"),
    "old": ("created_at", "id"),
    "key": ("key", "-created_at", "-id"),
}


@dataclass
class Found:
    rows: list[Memory]
    count: int  # at most COUNT_CAP + 1
    page: int
    ranked: bool  # the hybrid rank's order (one scope, words)

    @property
    def more_than_cap(self) -> bool:
        return self.count > COUNT_CAP

    @property
    def pages(self) -> int:
        """The pages the count accounts for (past the cap, more may follow)."""
        return max(1, min(MAX_PAGE, -(-min(self.count, COUNT_CAP) // PAGE_SIZE)))

    @property
    def has_previous(self) -> bool:
        return self.page > 1

    @property
    def has_next(self) -> bool:
        if self.more_than_cap:  # uncounted rows follow while a page is full
            return self.page < MAX_PAGE and len(self.rows) == PAGE_SIZE
        return self.page < self.pages


def readable_memories(user):
    """Every version of every memory at a scope the user reads (the first filter, always)."""
    roles = readable_scope_roles(user)
    rows = Memory.objects.all()
    if roles is not None:
        rows = rows.filter(scope_id__in=sorted(roles))
    return rows


def _state(rows, state: str):
    if state == "live":
        return rows.live()
    # retired_at as well as the reason: the condition of memory_retired_recent_idx.
    if state == "superseded":
        return rows.filter(retired_at__isnull=False, retired_reason=RetiredReason.SUPERSEDED)
    if state == "invalidated":
        return rows.filter(retired_at__isnull=False, retired_reason=RetiredReason.INVALIDATED)
    if state == "expired":
        return rows.filter(retired_at__isnull=True, expires_at__lte=Now())
    return rows


def _of_kind(rows, kind: str):
    """Rows at scopes of one kind. As scope ids when they are few (memory_scope_recent_idx
    then finds their rows); as a join when they are many (actors), where the capped count
    and the first page stop early anyway."""
    scopes = Scope.objects.filter(
        **({"token": "global"} if kind == "global" else {"token__startswith": f"{kind}:"})
    )
    ids = list(scopes.values_list("id", flat=True)[: KIND_IDS_MAX + 1])
    if len(ids) <= KIND_IDS_MAX:
        return rows.filter(scope_id__in=ids)
    return rows.filter(scope__in=scopes)


def _day_start(day) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min))


def filtered(user, f: dict):
    """The user's readable memories narrowed by the finder's filters (unordered)."""
    rows = _state(readable_memories(user), f["state"])
    if f["scope"]:
        rows = rows.filter(scope__token=f["scope"])
    if f["kind"]:
        rows = _of_kind(rows, f["kind"])
    if f["author"]:
        rows = rows.filter(author=f["author"])
    if f["pinned"]:
        rows = rows.filter(pinned=f["pinned"] == "yes")
    if f["tag"]:
        rows = rows.filter(tags__contains=[f["tag"]])
    if f["since"]:
        rows = rows.filter(created_at__gte=_day_start(f["since"]))
    if f["until"]:
        # `until` is a day, included whole.
        rows = rows.filter(created_at__lt=_day_start(f["until"]) + timedelta(days=1))
    return rows


def _hybrid_scope(user, f: dict) -> Scope | None:
    """The one readable scope a hybrid search runs in, if the filters allow it."""
    if not (f["q"] and f["scope"] and f["state"] == "live"):
        return None
    scope = Scope.objects.filter(token=f["scope"]).first()
    # Another tenant's scope is not even searched (its rows would be filtered out anyway).
    return scope if scope is not None and role_for(user, scope) is not None else None


def _matches(user, f: dict):
    """Every match in the finder's order: (rows, count, ranked). `rows` is a list when
    ranked (the hybrid rank's best RANKED_RESULTS), else an ordered queryset; `count` stops
    at COUNT_CAP + 1."""
    # The stored tsvector is filtered on, never shown: not fetched with 50 rows a page.
    rows = filtered(user, f).select_related("scope", "origin_actor").defer("search")
    scope = _hybrid_scope(user, f)
    if scope is not None:
        _, keys, _ = search.ranked_chain([scope.token], f["q"], RANKED_RESULTS)
        place = {key: n for n, key in enumerate(keys)}
        found = sorted(rows.filter(key__in=keys), key=lambda m: place[m.key])
        return found, len(found), True
    if f["q"]:
        rows = rows.filter(search=SearchQuery(f["q"], config=TS_CONFIG, search_type="websearch"))
    # The matches' ids, up to the cap: the count, and (when they are few) the rows to sort.
    ids = list(rows.order_by().values_list("id", flat=True)[: COUNT_CAP + 1])
    if len(ids) <= COUNT_CAP:
        # Few matches (a two-word search, a rare tag): sort just those. Left to itself the
        # planner may walk memory_recent_idx newest first, filtering row by row, through
        # hundreds of thousands of rows to find 50 rare ones (0.5 s at 1m).
        rows = Memory.objects.filter(id__in=ids).select_related("scope", "origin_actor")
        rows = rows.defer("search")
    return rows.order_by(*SORTS.get(f["sort"], SORTS["new"])), len(ids), False


def find(user, f: dict, page: int) -> Found:
    rows, count, ranked = _matches(user, f)
    if ranked:
        start = (page - 1) * PAGE_SIZE
        return Found(rows[start : start + PAGE_SIZE], count, page, ranked=True)
    if count > COUNT_CAP:
        page = min(page, MAX_PAGE)
    else:
        page = min(page, max(1, -(-count // PAGE_SIZE)))
    start = (page - 1) * PAGE_SIZE
    return Found(list(rows[start : start + PAGE_SIZE]), count, page, ranked=False)


def matching_uids(user, f: dict, limit: int) -> tuple[list[str], int]:
    """The ids of the first `limit` matches in the finder's order, and the count of all
    (at most COUNT_CAP + 1): what "every match" selects for a bulk action."""
    rows, count, ranked = _matches(user, f)
    if ranked:
        return [m.uid for m in rows[:limit]], count
    return list(rows.values_list("uid", flat=True)[:limit]), count


def state_of(memory: Memory, now=None) -> str:
    """How the finder names a version's state."""
    if memory.retired_at is not None:
        return memory.retired_reason
    now = now or timezone.now()
    if memory.expires_at is not None and memory.expires_at <= now:
        return "expired"
    return "live"


def bulk_targets(user, memories: list[Memory]) -> list[str]:
    """Scopes wider than at least one selected memory that the user reads, narrowest
    first (a memory for which the chosen one is not wider is reported, not republished)."""
    roles = readable_scope_roles(user)
    seen = {}
    for memory in memories[:50]:  # the offer only; every memory is checked when it runs
        for scope in promotion_targets(memory):
            if roles is None or scope.id in roles:
                seen.setdefault(scope.token, None)
    return list(seen)
