"""What the runs, conversation and attribution pages read: runs (stored digests) and their
prompt lines, conversations grouped by run, and the traces from a prompt line back to the
memory version behind it and the conversation that taught it. A conversation grouped by
run and an actor's breadcrumbs serve more than one of these pages.

Everything here is within the user's grants: a run, a line and a thread are readable when
their actor's own scope is (common/access.py).
"""

from collections import defaultdict
from dataclasses import dataclass, field
from itertools import groupby

from django.db.models import Count, OuterRef, Q, Subquery

from memory_console.console.common.access import (
    actor_for_reader,
    all_threads_for_reader,
    digest_lines_for_reader,
    digests_for_reader,
    origin_threads_for_reader,
)
from memory_core.accounts.permissions import readable_scope_roles
from memory_core.actors import ancestors
from memory_core.errors import NotFound
from memory_core.ledger.attribution import forgotten_events, lines_showing, run_window
from memory_core.models import (
    Actor,
    Digest,
    DigestLine,
    LedgerEvent,
    Memory,
    Message,
    Scope,
    Thread,
)
from memory_core.shapes import origin

# Runs listed a page.
PAGE_SIZE = 50
# Messages of a conversation shown a page.
PAGE_MESSAGES = 100
# Threads listed when a thread id is shared by several readable actors.
MAX_THREADS = 20


# --- shared by the pages --------------------------------------------------------------------


@dataclass
class RunGroup:
    """Consecutive messages of one run (or of no run), as the page shows them."""

    run_id: str | None
    messages: list[Message]
    highlighted: bool = False
    has_run_page: bool = False
    learned: list[Memory] = field(default_factory=list)


def group_by_run(messages, thread: Thread, *, highlight: str | None = None, learned=None):
    """Messages (in order) -> RunGroups; each knows whether its run has a stored digest."""
    runs = {m.run_id for m in messages if m.run_id}
    with_digest = set()
    if runs:
        # digest_one_per_actor_run's index: (actor, run_id).
        with_digest = set(
            Digest.objects.filter(actor_id=thread.actor_id, run_id__in=runs).values_list(
                "run_id", flat=True
            )
        )
    learned = learned or {}
    return [
        RunGroup(
            run_id=run_id,
            messages=list(group),
            highlighted=bool(highlight) and run_id == highlight,
            has_run_page=run_id in with_digest,
            learned=learned.get(run_id, []) if run_id else [],
        )
        for run_id, group in groupby(messages, key=lambda m: m.run_id)
    ]


def actor_trail(user, actor: Actor) -> list[dict]:
    """The scopes above an actor, widest first, each marked readable (its chip links to the
    scope page) or not (plain text: a link would lead to a 404). The actor's own scope is
    left out: the trail names the actor itself next, linked to its page."""
    readable = readable_scope_roles(user)
    return [
        {"scope": s, "readable": readable is None or s.id in readable}
        for s in reversed(ancestors(actor.scope)[1:])
    ]


# --- runs -----------------------------------------------------------------------------------


def recent_runs(user, actor_ref: str, before: str):
    """A page of digests, newest first, after the cursor `before` (a digest uid).

    digest_recent_idx (-created_at, -id) serves the unfiltered list, and
    digest_actor_recent_idx (actor, -created_at) the list of one actor. An actor outside
    the grants gives an empty list, as an unknown one does.
    """
    digests = digests_for_reader(user).defer("block", "entries")
    if actor_ref:
        digests = digests.filter(actor__ref=actor_ref)
    cursor = None
    if before:
        cursor = digests.filter(uid=before).values("created_at", "id").first()
    if cursor is not None:
        digests = digests.filter(created_at__lte=cursor["created_at"]).exclude(
            Q(created_at=cursor["created_at"]) & Q(id__gte=cursor["id"])
        )
    rows = list(digests.order_by("-created_at", "-id")[: PAGE_SIZE + 1])
    older = rows[PAGE_SIZE - 1].uid if len(rows) > PAGE_SIZE else None
    return rows[:PAGE_SIZE], older, cursor is not None


def kept(digest) -> int:
    """Keys the turn kept (`offered` - `omitted`); each is one entry line of the block."""
    stats = digest.stats or {}
    return max(0, int(stats.get("offered", 0)) - int(stats.get("omitted", 0)))


def run_chain(user, chain) -> list[dict]:
    """The run's chain as recorded, each scope marked readable (a chip links) or not."""
    roles = readable_scope_roles(user)
    ids = dict(Scope.objects.filter(token__in=list(chain)).values_list("token", "id"))
    return [
        {"token": t, "readable": t in ids and (roles is None or ids[t] in roles)} for t in chain
    ]


def line_rows(user, lines) -> list[dict]:
    """Each prompt line with the memory version behind it: a link when the user may open
    that memory, its scope when not, and the forget event when it was forgotten (a memory
    row leaves only through forget, so a line whose memory is gone was forgotten)."""
    roles = readable_scope_roles(user)
    forgotten = forgotten_events(ln.memory_uid for ln in lines if ln.memory_id is None)
    return [
        {
            "line": ln,
            "memory": ln.memory,
            "readable": ln.memory is not None and (roles is None or ln.memory.scope_id in roles),
            "forgotten": forgotten.get(ln.memory_uid) if ln.memory is None else None,
        }
        for ln in lines
    ]


def run_lines(digest) -> list:
    """A run's prompt lines in order, each with its memory version and scope."""
    return list(digest.lines.select_related("memory__scope").order_by("n"))


# --- conversations --------------------------------------------------------------------------


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


def thread_page(thread: Thread, before: str | None, highlight: str | None) -> ThreadPage:
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


def readable_threads(user, actor_ref: str):
    """The conversations the user may read (of actor `actor_ref` when given), with their
    activity, for the list to page through by id."""
    threads = all_threads_for_reader(user)
    if actor_ref:
        # The actor's id first, then its threads by that id: with the ref joined in, the
        # planner could not see how few threads one actor has and sometimes walked every
        # thread newest first; with the id it estimates from the column's statistics and
        # takes thread_actor_recent_idx.
        actor_id = Actor.objects.filter(ref=actor_ref).values_list("id", flat=True).first()
        threads = threads.filter(actor_id=actor_id) if actor_id else threads.none()
    return _with_activity(threads)


def erased_actor(user, actor_ref: str | None) -> Actor | None:
    """The erased actor `actor_ref`, if the user may read it (the refusal was logged by the
    thread look-up; this only asks what may be shown)."""
    if not actor_ref:
        return None
    try:
        actor = actor_for_reader(user, actor_ref, action=None)
    except NotFound:
        return None
    return actor if actor.erased_at is not None else None


# --- attribution ----------------------------------------------------------------------------


def attribution_lines(user, pasted: str, run_id: str, actor_ref: str, limit: int):
    """The readable prompt lines that showed `pasted` (or every line of run `run_id`, of
    actor `actor_ref` when given), newest runs first, at most `limit`."""
    # The runs' blocks and entries are not needed: leave them in the database.
    lines = digest_lines_for_reader(user).defer("digest__block", "digest__entries")
    if pasted:
        # Equality on the line's forms, through the index on their hash; never a LIKE.
        lines = lines_showing(lines, pasted)
    if run_id:
        lines = lines.filter(digest__run_id=run_id)
    if actor_ref:
        lines = lines.filter(digest__actor__ref=actor_ref)
    return list(lines.order_by("-digest__created_at", "-digest_id", "n")[:limit])


@dataclass
class Trace:
    """One memory version behind matched lines, and everything known about it."""

    uid: str
    lines: list[DigestLine]
    memory: Memory | None = None
    readable: bool = False
    versions: list[Memory] = field(default_factory=list)
    origin: dict | None = None
    thread: Thread | None = None
    groups: list[RunGroup] = field(default_factory=list)
    run_messages_stored: bool = False
    origin_run_page: bool = False  # the originating run stored a digest (it has a page)
    forgotten: LedgerEvent | None = None


def _versions(memories) -> dict:
    """{lineage: every version, oldest first}: one query over memory_lineage_idx."""
    lineages = {m.lineage for m in memories}
    by_lineage = defaultdict(list)
    if lineages:
        rows = (
            Memory.objects.filter(lineage__in=lineages)
            .select_related("scope", "origin_actor")
            .order_by("created_at", "id")
        )
        for version in rows:
            by_lineage[version.lineage].append(version)
    return by_lineage


def _stored_runs(memories) -> set[tuple[int, str]]:
    """(actor id, run id) of these memories' originating runs that stored a digest."""
    pairs = {(m.origin_actor_id, m.origin_run) for m in memories if m.origin_run}
    if not pairs:
        return set()
    stored = Digest.objects.filter(
        actor_id__in={a for a, _ in pairs}, run_id__in={r for _, r in pairs}
    ).values_list("actor_id", "run_id")
    return set(stored) & pairs


def traces_for(user, lines: list[DigestLine]) -> list[Trace]:
    if not lines:
        return []
    by_uid: dict[str, list[DigestLine]] = {}
    for line in lines:
        by_uid.setdefault(line.memory_uid, []).append(line)
    memories = {
        m.uid: m
        for m in Memory.objects.filter(uid__in=list(by_uid)).select_related("scope", "origin_actor")
    }
    roles = readable_scope_roles(user)
    # Past a scope outside the grants the page shows the line (the run is readable) but
    # neither the memory's other versions nor its conversation.
    readable = [m for m in memories.values() if roles is None or m.scope_id in roles]
    versions = _versions(readable)
    threads = origin_threads_for_reader(
        user, {(m.origin_actor_id, m.origin_thread) for m in readable}
    )
    runs = _stored_runs(readable)
    forgotten = forgotten_events(uid for uid in by_uid if uid not in memories)
    traces = []
    for uid, carried in by_uid.items():
        trace = Trace(uid=uid, lines=carried, memory=memories.get(uid))
        memory = trace.memory
        if memory is None:
            trace.forgotten = forgotten.get(uid)
        elif roles is None or memory.scope_id in roles:
            trace.readable = True
            trace.versions = versions[memory.lineage]
            trace.origin = origin(memory, set(threads))
            trace.thread = threads.get((memory.origin_actor_id, memory.origin_thread))
            trace.origin_run_page = (memory.origin_actor_id, memory.origin_run) in runs
            if trace.thread is not None and memory.origin_run:
                window, trace.run_messages_stored = run_window(trace.thread, memory.origin_run)
                trace.groups = group_by_run(window, trace.thread, highlight=memory.origin_run)
        traces.append(trace)
    return traces


def shown_ids(traces: list[Trace]) -> list[str]:
    """Every memory version the page names: the lines' own and their chains'."""
    ids = dict.fromkeys(t.uid for t in traces)
    ids.update(dict.fromkeys(v.uid for t in traces for v in t.versions))
    return list(ids)
