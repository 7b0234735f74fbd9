"""Runs, conversations and attribution: what an agent was given, and where it came from.

Runs: the stored digests (one per agent turn), newest first, and one run line by line.
`/runs/<actor>/<run_id>/`: a run id is the host's, unique per actor, and may contain "/"
(hosts choose them: "batch/7" is a fine run id), and an actor ref may be qualified by its
tenant (`acme/u1`), so the route takes the whole rest of the path and
`links.run_candidates` reads it. Nothing is routed below a run; links encode the run id
whole (common/links.py), and an id that is exactly "." or ".." is linked through
`/attribution/?run=…`, which finds any run whatever its id.

Conversations: the list of them (`/threads/`), and a thread's messages, grouped by run.
`/threads/<thread_id>/` names the host's thread id, which is unique per actor, not
globally (two hosts may both call theirs "t1"). The page shows every thread with that id
the user may read, each under its actor (usually there is one); `?actor=<ref>` picks one,
and every link the console makes to a conversation carries it. Host ids may contain "/",
so the route takes `<path:thread_id>` (nothing is routed below a thread, so a "/" inside
the id is never ambiguous). Messages are shown newest page first, in the order they were
posted, paged with `?actor=<ref>&before=<message id>`; `?run=<run_id>` highlights one
run's messages. Transcripts are written by end users and agents: every text is escaped
(autoescape), never marked safe.

Attribution: paste a line an agent was given (or a run id) and trace it. For every
readable run whose prompt carried the line: the memory version behind it, that memory's
whole version chain, its origin, and the conversation that taught it with the originating
run's messages highlighted. A pruned conversation is "origin no longer resolves", never an
error; a forgotten memory shows when and by whom, and no text. The page links its export
(`/exports/attribution.jsonl`) with the same query. `?line=` is matched by
equality on the exact forms a stored line can take
(memory_core.ledger.attribution.lines_showing), an index probe on the hash of
DigestLine.text; `?run=` (with an optional `?actor=`, since run ids are unique per actor
only) traces every line of a run. The pasted text is never written to the access log: it
is a fact.

Every `?actor=` here, and a pasted line's `[scope]`, is a name as the user types it
(common/names.py): relative to their tenant when their grants lie in one; an ambiguous bare
name is said so above the results.
"""

from django.views.decorators.http import require_GET

from memory_console.console.common.access import (
    console_view,
    digest_for_reader,
    threads_for_reader,
)
from memory_console.console.common.cursors import cursor_id, newest_first
from memory_console.console.common.rendering import render_page
from memory_console.console.runs import capture
from memory_console.console.runs.forms import (
    ActorFilter,
    AttributionQuery,
    RunFilter,
    ThreadFilter,
)
from memory_console.console.runs.reads import (
    MAX_THREADS,
    actor_trail,
    attribution_lines,
    erased_actor,
    kept,
    line_rows,
    readable_threads,
    recent_runs,
    run_chain,
    run_lines,
    shown_ids,
    thread_page,
    traces_for,
)
from memory_core.accounts.principals import Principal
from memory_core.errors import NotFound
from memory_core.ledger import access_log
from memory_core.rules.scopes import actor_scope
from memory_core.transcripts import thread_states

# Matched prompt lines shown, newest runs first.
MAX_LINES = 100


# --- runs -----------------------------------------------------------------------------------


@console_view
@require_GET
def run_list(request):
    form = RunFilter(request.GET, user=request.user)
    filters = form.values()
    actor_ref = filters["actor"]
    runs, older, paged = recent_runs(request.user, actor_ref, filters["before"])
    states = thread_states(runs)
    for digest in runs:
        digest.kept = kept(digest)
        digest.thread_state = states[digest.id]
    context = {
        "runs": runs,
        "older": older,
        "paged": paged,
        "actor_ref": actor_ref,
        "name_problems": form.name_problems,
    }
    response = render_page(
        request, "console/runs/runs.html", context, fragment="console/runs/_run_rows.html"
    )
    # The list shows queries and stats, no memory text: a row says who looked, and at whom.
    access_log.record(
        Principal.for_user(request.user),
        "run.list",
        200,
        actor_ref=actor_ref or None,
        count=len(runs),
    )
    return response


@console_view
@require_GET
def run_detail(request, path):
    user = request.user
    digest = digest_for_reader(user, path)
    lines = run_lines(digest)
    thread_state = thread_states([digest])[digest.id]
    context = {
        "digest": digest,
        "actor_ref": digest.actor.ref,
        "trail": actor_trail(user, digest.actor),
        "rows": line_rows(user, lines),
        "chain": run_chain(user, digest.chain),
        "thread_state": thread_state,
        "kept": kept(digest),
    }
    response = render_page(request, "console/runs/run.html", context)
    access_log.record(
        Principal.for_user(user),
        "run.read",
        200,
        actor_ref=digest.actor.ref,
        scope=actor_scope(digest.actor.ref),
        memory_ids=sorted({ln.memory_uid for ln in lines}),
        count=len(lines),
        detail={"run": digest.uid},
    )
    return response


# --- conversations --------------------------------------------------------------------------


@console_view
@require_GET
def thread_list(request):
    """Conversations the user may read, newest first (by when the thread began), paged by
    id cursors like the ledger; `?actor=<ref>` keeps one actor's (thread_actor_recent_idx).
    """
    form = ActorFilter(request.GET, user=request.user)
    actor_ref = form.values()["actor"]
    page = newest_first(
        readable_threads(request.user, actor_ref),
        before=cursor_id(request.GET.get("before")),
        after=cursor_id(request.GET.get("after")),
    )
    context = {"page": page, "actor_ref": actor_ref, "name_problems": form.name_problems}
    response = render_page(
        request, "console/runs/threads.html", context, fragment="console/runs/_thread_rows.html"
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
    filters = ThreadFilter(request.GET, user=user).values()
    actor_ref = filters["actor"] or None
    highlight = filters["run"] or None
    before = filters["before"] or None
    try:
        threads = threads_for_reader(user, thread_id, actor_ref, limit=MAX_THREADS + 1, action=None)
    except NotFound:
        erased = erased_actor(user, actor_ref)
        if erased is None:
            # The refusal, this time logged (the first look-up only asked).
            threads_for_reader(user, thread_id, actor_ref, limit=MAX_THREADS + 1)
            raise
        # The person was erased with their conversations: say so, not "not found".
        context = {"thread_id": thread_id, "actor_ref": actor_ref, "erased": erased}
        return render_page(request, "console/runs/thread.html", context)
    more_threads = len(threads) > MAX_THREADS
    pages = [thread_page(thread, before, highlight) for thread in threads[:MAX_THREADS]]
    capture.attach(user, pages)  # what was extracted from each (runs/capture.py)
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
    response = render_page(request, "console/runs/thread.html", context)
    principal = Principal.for_user(user)
    for page in pages:
        access_log.record(
            principal,
            "thread.read",
            200,
            actor_ref=page.thread.actor.ref,
            scope=actor_scope(page.thread.actor.ref),
            memory_ids=[m.uid for g in page.groups for m in g.learned] + capture.shown(page),
            count=page.count,
            detail={"thread": page.thread.ref},
        )
    return response


# --- attribution ----------------------------------------------------------------------------


@console_view
@require_GET
def attribution(request):
    user = request.user
    form = AttributionQuery(request.GET, user=user)
    pasted, run_id, actor_ref = form.query()
    searched = bool(pasted or run_id)
    lines = attribution_lines(user, pasted, run_id, actor_ref, MAX_LINES + 1) if searched else []
    truncated = len(lines) > MAX_LINES
    lines = lines[:MAX_LINES]
    traces = traces_for(user, lines)
    context = {
        "pasted": pasted,
        "run_id": run_id,
        "actor_ref": actor_ref,
        "searched": searched,
        "lines": lines,
        "runs": len({line.digest_id for line in lines}),
        "traces": traces,
        "truncated": truncated,
        "max_lines": MAX_LINES,
        "name_problems": form.name_problems,
        "export": form.export_offer() if searched else None,
    }
    response = render_page(
        request,
        "console/runs/attribution.html",
        context,
        fragment="console/runs/_attribution_results.html",
    )
    if searched:
        actors = {line.digest.actor.ref for line in lines}
        access_log.record(
            Principal.for_user(user),
            "attribution.read",
            200,
            actor_ref=actors.pop() if len(actors) == 1 else None,
            memory_ids=shown_ids(traces),
            count=len(lines),
            detail={"by": "+".join(k for k, v in (("line", pasted), ("run", run_id)) if v)},
        )
    return response
