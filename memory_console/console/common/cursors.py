"""Keyset pages over the append-only tables (ledger, access log), newest first.

A page is named by an event id, never by an OFFSET: `before=<id>` is the page of rows just
older than that id, `after=<id>` the rows just newer. Rows are only ever appended, so while
new events arrive an OFFSET page would shift (showing rows twice, or skipping some) where
an id cursor keeps pointing at the same rows. Each page is one `ORDER BY id LIMIT n+1`
walking the index behind the filter; the extra row says whether another page exists.
"""

from dataclasses import dataclass

from memory_console.console.common.forms import PAGE_SIZE
from memory_console.console.common.parameters import BIGINT_MAX


def cursor_id(raw) -> int | None:
    """An id from the query string (at most a bigint's); anything else (a bookmark gone
    stale, junk) is None."""
    try:
        value = int(raw)
    except (TypeError, ValueError):
        return None
    return min(value, BIGINT_MAX) if value >= 0 else None


@dataclass(frozen=True)
class CursorPage:
    rows: list
    has_newer: bool
    has_older: bool

    @property
    def newest_id(self) -> int | None:
        return self.rows[0].id if self.rows else None

    @property
    def oldest_id(self) -> int | None:
        return self.rows[-1].id if self.rows else None

    @property
    def is_head(self) -> bool:
        """No newer row matches: this page is where new events would appear."""
        return not self.has_newer


def newest_first(queryset, *, before=None, after=None, size=PAGE_SIZE) -> CursorPage:
    """One page of `queryset`, newest first: the newest rows, or those just older than
    `before`, or those just newer than `after`."""
    if after is not None:
        rows = list(queryset.filter(id__gt=after).order_by("id")[: size + 1])
        has_newer = len(rows) > size
        rows = rows[:size][::-1]
        older_than = rows[-1].id if rows else after + 1
        has_older = queryset.filter(id__lt=older_than).exists()
        return CursorPage(rows, has_newer=has_newer, has_older=has_older)
    older = queryset.filter(id__lt=before) if before is not None else queryset
    rows = list(older.order_by("-id")[: size + 1])
    has_older = len(rows) > size
    rows = rows[:size]
    has_newer = False
    if before is not None:
        newer_than = rows[0].id if rows else before - 1
        has_newer = queryset.filter(id__gt=newer_than).exists()
    return CursorPage(rows, has_newer=has_newer, has_older=has_older)


def newer_than(queryset, after: int, size=PAGE_SIZE) -> list:
    """The live view's poll: up to `size` rows newer than `after`, the oldest of them first
    fetched (so a burst larger than a page arrives over several polls, without a gap), and
    returned newest first for prepending."""
    return list(queryset.filter(id__gt=after).order_by("id")[:size])[::-1]


def section_cursors(request, prefix: str) -> dict:
    """`before`/`after` of one of several paged lists on a page, read from
    `<prefix>before=` / `<prefix>after=` so each list pages on its own."""
    return {
        "before": cursor_id(request.GET.get(f"{prefix}before")),
        "after": cursor_id(request.GET.get(f"{prefix}after")),
    }


def section_links(request, page: CursorPage, prefix: str, *, path: str) -> dict:
    """The pager's addresses for one list of the page at `path` among several
    (_section_pager.html): the other lists' cursors and every other parameter are kept.
    `path` rather than request.path: an action's POST renders the page too."""

    def address(**cursor) -> str:
        query = request.GET.copy()
        for name in ("before", "after"):
            query.pop(f"{prefix}{name}", None)
        for name, value in cursor.items():
            query[f"{prefix}{name}"] = value
        return f"{path}?{query.urlencode()}" if query else path

    links = {}
    if page.has_newer:
        links["newest"] = address()
        links["newer"] = address(after=page.newest_id)
    if page.has_older:
        links["older"] = address(before=page.oldest_id)
    return links
