"""What the memory page reads about one memory: its version chain, where it was
republished, its embedding, and its histories (ledger events, access-log rows, the runs
whose prompts carried it), each bounded however long the memory has lived."""

from django.db.models import Q

from memory_console.console.common.access import readable_scope_roles
from memory_console.console.common.cursors import newest_first
from memory_core.models import AccessLog, DigestLine, Embedding, LedgerEvent, Memory
from memory_core.recall import providers

# The page shows the newest rows of each history; the ledger and access pages have the rest.
HISTORY_ROWS = 100
# The runs that carried a memory and its access rows grow with every turn: paged by id
# cursors (common/cursors.py), PAGE_ROWS at a time, with their totals.
PAGE_ROWS = 50
# A total stops here ("more than 1,000"): a policy pinned for everyone is in every turn's
# prompt and access row, and counting them all read thousands of rows per view.
TOTAL_CAP = 1_000


def versions(memory: Memory) -> list[Memory]:
    """Every version of the memory, oldest first."""
    return list(
        Memory.objects.filter(lineage=memory.lineage)
        .select_related("scope", "origin_actor")
        .order_by("created_at", "id")
    )


def promotions(memory: Memory) -> list[Memory]:
    """The memories republished wider from this one."""
    return list(memory.promotions.select_related("scope").order_by("created_at"))


def ledger_events(memory: Memory, uids: list[str]) -> list[LedgerEvent]:
    """The newest ledger events about the versions `uids`."""
    # Events about a version are written at its scope, except a promotion, which is written
    # at the target scope and names the original in `promoted_from`. Filtering on scope and
    # kind first keeps to the indexed columns; the payload test then runs on few rows.
    about = Q(payload__memory__in=uids) | Q(payload__supersedes__in=uids)
    return list(
        LedgerEvent.objects.filter(
            Q(scope=memory.scope.token) & about
            | Q(kind="memory.promoted", payload__promoted_from__in=uids)
        ).order_by("-id")[:HISTORY_ROWS]
    )


def access_rows(uids: list[str]):
    """The access-log rows naming any of the versions (access_memory_ids_gin)."""
    return AccessLog.objects.filter(memory_ids__overlap=uids)


def carrying_lines(user, uids: list[str]):
    """The prompt lines that carried any of the versions, of runs the user may read."""
    # A digest's lines are written with ascending ids after it: newest line id first is
    # newest run first.
    # The table shows a run's time, actor and id: the digest's block and entries (11 KB a
    # run, compressed) are neither read nor parsed.
    lines = (
        DigestLine.objects.filter(memory_uid__in=uids)
        .select_related("digest__actor")
        .defer("digest__block", "digest__entries")
    )
    readable = readable_scope_roles(user)
    if readable is not None:
        # Only runs of actors the user may read; their run pages would 404 anyway.
        lines = lines.filter(digest__actor__scope_id__in=list(readable))
    return lines


def paged(rows, cursors: dict):
    """One page of `rows` (newest first, at the `before`/`after` cursors), its total and
    whether there are more than the total says: (page, total, more).

    The total counts only this memory's rows, through the index that finds them
    (digestline_memory_uid_idx, access_memory_ids_gin), never the whole table, and stops
    past TOTAL_CAP (`more` is then true and `total` the cap)."""
    page = newest_first(rows, **cursors, size=PAGE_ROWS)
    total = len(page.rows)
    if page.has_older or page.has_newer:
        total = rows.order_by().values("id")[: TOTAL_CAP + 1].count()
    return page, min(total, TOTAL_CAP), total > TOTAL_CAP


def embedding(memory: Memory):
    """Who embedded this version (never its vector): the row's embedder, width and time,
    with whether the configured embedder's searches compare it."""
    row = Embedding.objects.filter(memory=memory).values("embedder", "dims", "embedded_at").first()
    if row is None or row["embedder"] is None:
        return {"pending": True}
    current = providers.current()
    row["current"] = current is not None and (current.identity, current.dims) == (
        row["embedder"],
        row["dims"],
    )
    return row
