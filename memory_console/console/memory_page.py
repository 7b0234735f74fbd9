"""The memory page's content: one memory, its version chain, and everything recorded about
it. Rendered by the page's view (views/memories.py) and, with the result of an action
inside, by the memory actions (views/memory_actions.py)."""

from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from memory_console.console.access import readable_scope_roles
from memory_console.console.cursors import newest_first, section_cursors, section_links
from memory_console.console.rendering import render_page
from memory_core.accounts.permissions import can_administer, role_for
from memory_core.accounts.principals import Principal
from memory_core.ledger import access_log
from memory_core.models import AccessLog, DigestLine, Embedding, LedgerEvent, Memory
from memory_core.models.access import Role
from memory_core.recall import providers
from memory_core.rules.names import ref_of_scope
from memory_core.shapes import origin, resolving_threads
from memory_core.writes import promotion_targets

# The page shows the newest rows of each history; the ledger and access pages have the rest.
HISTORY_ROWS = 100
# The runs that carried a memory and its access rows grow with every turn: paged by id
# cursors (cursors.py), PAGE_ROWS at a time, with their totals.
PAGE_ROWS = 50
# A total stops here ("more than 1,000"): a policy pinned for everyone is in every turn's
# prompt and access row, and counting them all read thousands of rows per view (issue 19).
TOTAL_CAP = 1_000


def _ledger_events(memory: Memory, uids: list[str]):
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


def _paged(request, memory: Memory, rows, prefix: str) -> dict:
    """One page of `rows` (newest first, `<prefix>before=`/`after=`), its links and total.

    The total counts only this memory's rows, through the index that finds them
    (digestline_memory_uid_idx, access_memory_ids_gin), never the whole table, and stops
    past TOTAL_CAP (`more` is then true and `total` the cap)."""
    page = newest_first(rows, **section_cursors(request, prefix), size=PAGE_ROWS)
    total = len(page.rows)
    if page.has_older or page.has_newer:
        total = rows.order_by().values("id")[: TOTAL_CAP + 1].count()
    return {
        "rows": page.rows,
        "links": section_links(
            request, page, prefix, path=reverse("console:memory", kwargs={"uid": memory.uid})
        ),
        "total": min(total, TOTAL_CAP),
        "more": total > TOTAL_CAP,
    }


def _runs(request, memory: Memory, uids: list[str]) -> dict:
    # A digest's lines are written with ascending ids after it: newest line id first is
    # newest run first.
    # The table shows a run's time, actor and id: the digest's block and entries (11 KB a
    # run, compressed) are neither read nor parsed.
    lines = (
        DigestLine.objects.filter(memory_uid__in=uids)
        .select_related("digest__actor")
        .defer("digest__block", "digest__entries")
    )
    readable = readable_scope_roles(request.user)
    if readable is not None:
        # Only runs of actors the user may read; their run pages would 404 anyway.
        lines = lines.filter(digest__actor__scope_id__in=list(readable))
    return _paged(request, memory, lines, "runs_")


def _embedding(memory: Memory):
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


def memory_context(request, memory: Memory, *, errors=None, posted=None) -> dict:
    user = request.user
    principal = Principal.for_user(user)
    role = role_for(user, memory.scope)
    is_admin = role == Role.ADMIN
    versions = list(
        Memory.objects.filter(lineage=memory.lineage)
        .select_related("scope", "origin_actor")
        .order_by("created_at", "id")
    )
    uids = [v.uid for v in versions]
    live = memory.retired_at is None
    targets = []
    if live:
        # Offered only where the user administers the target (the service checks again).
        targets = [t for t in promotion_targets(memory) if can_administer(principal, t)]
    successor = next((v for v in versions if v.supersedes_id == memory.id), None)
    # Revert offers each earlier text once (its newest version): reverting to the current
    # text would change nothing, and the service refuses it.
    revert_choices = {}
    if live:
        for v in reversed(versions):
            if v.pk != memory.pk and v.text != memory.text:
                revert_choices.setdefault(v.text, v)
    return {
        "memory": memory,
        "role": role,
        "is_admin": is_admin,
        "live": live,
        # Expired rows keep their slot (no longer in any prompt) until someone retires them.
        "expired": memory.expires_at is not None and memory.expires_at <= timezone.now(),
        "origin": origin(memory, resolving_threads([memory])),
        "actor_ref": ref_of_scope(memory.scope.token),
        "successor": successor,
        "revert_choices": list(revert_choices.values()),
        "reinstatable": memory.retired_reason == "invalidated" and successor is None,
        "versions": versions,
        "promotions": list(memory.promotions.select_related("scope").order_by("created_at")),
        "promoted_from_readable": memory.promoted_from_id is not None
        and role_for(user, memory.promoted_from.scope) is not None,
        "targets": targets,
        "embedding": _embedding(memory),
        "ledger_events": _ledger_events(memory, uids),
        "access": _paged(
            request, memory, AccessLog.objects.filter(memory_ids__overlap=uids), "access_"
        ),
        "runs": _runs(request, memory, uids),
        "errors": errors or {},
        "posted": posted or {},
    }


def render_memory(request, memory: Memory, *, errors=None, posted=None, notice=None, status=200):
    """The page, or for htmx its content fragment (memory.html#memory-content), which an
    inline action swaps in with its `notice` (memory_actions.Notice) inside."""
    context = memory_context(request, memory, errors=errors, posted=posted)
    context["notice"] = notice
    response = render_page(
        request,
        "console/memory.html",
        context,
        fragment="console/memory.html#memory-content",
        status=status,
    )
    access_log.record(
        Principal.for_user(request.user),
        "memory.read",
        200,
        actor_ref=ref_of_scope(memory.scope.token),
        scope=memory.scope.token,
        memory_ids=[memory.uid],
        count=1,
    )
    return response
