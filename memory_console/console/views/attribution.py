"""Attribution: paste a line an agent was given (or a run id) and trace it.

For every readable run whose prompt carried the line: the memory version behind it, that
memory's whole version chain, its origin, and the conversation that taught it with the
originating run's messages highlighted. A pruned conversation is "origin no longer
resolves", never an error; a forgotten memory shows when and by whom, and no text.

`?line=` is matched by equality on the exact forms a stored line can take
(memory_core.ledger.attribution.lines_showing), an index probe on the hash of DigestLine.text;
`?run=` (with an optional `?actor=`, since run ids are unique per actor only) traces every
line of a run.
The pasted text is never written to the access log: it is a fact.
"""

from collections import defaultdict
from dataclasses import dataclass, field

from django.views.decorators.http import require_GET

from memory_console.console.access import (
    console_view,
    origin_threads_for_reader,
    readable_scope_roles,
)
from memory_console.console.audit_rows import attribution_lines, attribution_query
from memory_console.console.reads import RunGroup, group_by_run
from memory_console.console.rendering import render_page
from memory_core.accounts.principals import Principal
from memory_core.ledger import access_log
from memory_core.ledger.attribution import forgotten_events, run_window
from memory_core.models import Digest, DigestLine, LedgerEvent, Memory, Thread
from memory_core.shapes import origin

# Matched prompt lines shown, newest runs first.
MAX_LINES = 100


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


def _shown_ids(traces: list[Trace]) -> list[str]:
    """Every memory version the page names: the lines' own and their chains'."""
    ids = dict.fromkeys(t.uid for t in traces)
    ids.update(dict.fromkeys(v.uid for t in traces for v in t.versions))
    return list(ids)


@console_view
@require_GET
def attribution(request):
    user = request.user
    pasted, run_id, actor_ref = attribution_query(request.GET)
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
    }
    response = render_page(
        request,
        "console/attribution.html",
        context,
        fragment="console/_attribution_results.html",
    )
    if searched:
        actors = {line.digest.actor.ref for line in lines}
        access_log.record(
            Principal.for_user(user),
            "attribution.read",
            200,
            actor_ref=actors.pop() if len(actors) == 1 else None,
            memory_ids=_shown_ids(traces),
            count=len(lines),
            detail={"by": "+".join(k for k, v in (("line", pasted), ("run", run_id)) if v)},
        )
    return response
