"""Conversations: the list of them (`/threads/`), and a thread's messages, grouped by run.

`/threads/<thread_id>/` names the host's thread id, which is unique per actor, not
globally (two hosts may both call theirs "t1"). The page shows every thread with that id
the user may read, each under its actor (usually there is one); `?actor=<ref>` picks one,
and every link the console makes to a conversation carries it. Host ids may contain "/",
so the route takes `<path:thread_id>` (nothing is routed below a thread, so a "/" inside
the id is never ambiguous).

Messages are shown newest page first, in the order they were posted, paged with
`?actor=<ref>&before=<message id>`; `?run=<run_id>` highlights one run's messages.
Transcripts are written by end users and agents: every text is escaped (autoescape),
never marked safe.
"""

from dataclasses import dataclass

from django.db.models import Count, OuterRef, Q, Subquery
from django.views.decorators.http import require_GET

from memory_console.console.access import (
    actor_for_reader,
    all_threads_for_reader,
    console_view,
    threads_for_reader,
)
from memory_console.console.cursors import cursor_id, newest_first
from memory_console.console.reads import RunGroup, actor_trail, group_by_run
from memory_console.console.rendering import render_page
from memory_core.accounts.principals import Principal
from memory_core.errors import NotFound
from memory_core.ledger import access_log
from memory_core.models import Actor, Memory, Message, Thread
from memory_core.rules.inputs import HOST_ID_MAX
from memory_core.rules.scopes import actor_scope

PAGE_MESSAGES = 100
# Threads listed when a thread id is shared by several readable actors.
MAX_THREADS = 20


def learned_in(thread: Thread, runs) -> dict[str, list[Memory]]:
    """{run id: memory versions the agent remembered in that run of this thread}."""
    runs = {r for r in runs if r}
    if not runs:
        return {}
    rows = (
        Memory.objects.filter(
            origin_actor_id=thread.actor_id, origin_thread=thread.ref, origin_run__in=runs
        )
        .select_related("scope")
        .order_by("created_at", "id")
    )
    by_run: dict[str, list[Memory]] = {}
    for memory in rows:
        by_run.setdefault(memory.origin_run, []).append(memory)
    return by_run


@dataclass
class ThreadPage:
    thread: Thread
    groups: list[RunGroup]
    count: int
    older: str | None  # the cursor for the page before this one
    paged: bool  # this is not the newest page


def _page_of(thread: Thread, before: str | None, highlight: str | None) -> ThreadPage:
    messages = thread.messages.all()
    cursor = None
    if before:
        cursor = thread.messages.filter(uid=before).values("created_at", "id").first()
    if cursor is not None:
        # (created_at, id) < cursor, walking message_thread_recent_idx backwards.
        messages = messages.filter(created_at__lte=cursor["created_at"]).exclude(
            Q(created_at=cursor["created_at"]) & Q(id__gte=cursor["id"])
        )
    newest_first = list(messages.order_by("-created_at", "-id")[: PAGE_MESSAGES + 1])
    older = newest_first[PAGE_MESSAGES - 1].uid if len(newest_first) > PAGE_MESSAGES else None
    shown = list(reversed(newest_first[:PAGE_MESSAGES]))
    learned = learned_in(thread, {m.run_id for m in shown})
    return ThreadPage(
        thread=thread,
        groups=group_by_run(shown, thread, highlight=highlight, learned=learned),
        count=len(shown),
        older=older,
        paged=cursor is not None,
    )


def _param(request, name: str) -> str:
    return request.GET.get(name, "").strip()[:HOST_ID_MAX]


def _with_activity(threads):
    """Each thread's message count and latest message time, computed for the page's rows
    only (correlated subqueries over message_thread_recent_idx), never for the table."""
    messages = Message.objects.filter(thread=OuterRef("pk"))
    return threads.annotate(
        message_count=Subquery(
            messages.order_by().values("thread").annotate(n=Count("id")).values("n")[:1]
        ),
        last_at=Subquery(messages.order_by("-created_at", "-id").values("created_at")[:1]),
    )


@console_view
@require_GET
def thread_list(request):
    """Conversations the user may read, newest first (by when the thread began), paged by
    id cursors like the ledger; `?actor=<ref>` keeps one actor's (thread_actor_recent_idx).
    """
    actor_ref = _param(request, "actor")
    threads = all_threads_for_reader(request.user)
    if actor_ref:
        # The actor's id first, then its threads by that id: with the ref joined in, the
        # planner could not see how few threads one actor has and sometimes walked every
        # thread newest first; with the id it estimates from the column's statistics and
        # takes thread_actor_recent_idx.
        actor_id = Actor.objects.filter(ref=actor_ref).values_list("id", flat=True).first()
        threads = threads.filter(actor_id=actor_id) if actor_id else threads.none()
    page = newest_first(
        _with_activity(threads),
        before=cursor_id(request.GET.get("before")),
        after=cursor_id(request.GET.get("after")),
    )
    context = {"page": page, "actor_ref": actor_ref}
    response = render_page(
        request, "console/threads.html", context, fragment="console/_thread_rows.html"
    )
    # The list shows thread ids and counts, no message text.
    access_log.record(
        Principal.for_user(request.user),
        "thread.list",
        200,
        actor_ref=actor_ref or None,
        count=len(page.rows),
    )
    return response


@console_view
@require_GET
def thread_detail(request, thread_id):
    user = request.user
    actor_ref = _param(request, "actor") or None
    highlight = _param(request, "run") or None
    before = _param(request, "before") or None
    try:
        threads = threads_for_reader(user, thread_id, actor_ref, limit=MAX_THREADS + 1, action=None)
    except NotFound:
        erased = _erased_actor(user, actor_ref)
        if erased is None:
            # The refusal, this time logged (the first look-up only asked).
            threads_for_reader(user, thread_id, actor_ref, limit=MAX_THREADS + 1)
            raise
        # The person was erased with their conversations: say so, not "not found".
        context = {"thread_id": thread_id, "actor_ref": actor_ref, "erased": erased}
        return render_page(request, "console/thread.html", context)
    more_threads = len(threads) > MAX_THREADS
    pages = [_page_of(thread, before, highlight) for thread in threads[:MAX_THREADS]]
    context = {
        "thread_id": thread_id,
        "actor_ref": actor_ref,
        "highlight": highlight,
        "pages": pages,
        "several": len(pages) > 1,
        "more_threads": more_threads,
    }
    if len(pages) == 1:
        # One actor's thread: breadcrumbs through its scopes and actor. Several actors
        # share the id: no one trail fits, the page lists them under the conversations.
        actor = pages[0].thread.actor
        context["trail"] = actor_trail(user, actor)
        context["trail_actor"] = actor.ref
    response = render_page(request, "console/thread.html", context)
    principal = Principal.for_user(user)
    for page in pages:
        access_log.record(
            principal,
            "thread.read",
            200,
            actor_ref=page.thread.actor.ref,
            scope=actor_scope(page.thread.actor.ref),
            memory_ids=[m.uid for g in page.groups for m in g.learned],
            count=page.count,
            detail={"thread": page.thread.ref},
        )
    return response


def _erased_actor(user, actor_ref: str | None) -> Actor | None:
    """The erased actor `actor_ref`, if the user may read it (the refusal was logged by the
    thread look-up; this only asks what may be shown)."""
    if not actor_ref:
        return None
    try:
        actor = actor_for_reader(user, actor_ref, action=None)
    except NotFound:
        return None
    return actor if actor.erased_at is not None else None
