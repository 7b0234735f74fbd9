"""Runs: the stored digests (one per agent turn), newest first, and one run line by line.

`/runs/<actor>/<run_id>/`: a run id is the host's, unique per actor, and may contain "/"
(hosts choose them: "batch/7" is a fine run id), and an actor ref may be qualified by its
tenant (`acme/u1`), so the route takes the whole rest of the path and
`links.run_candidates` reads it. Nothing is routed below a run; links encode the run id
whole (console/links.py), and an id that is exactly "." or ".." is linked through
`/attribution/?run=…`, which finds any run whatever its id.
"""

from django.db.models import Q
from django.views.decorators.http import require_GET

from memory_console.console.access import (
    console_view,
    digest_for_reader,
    digests_for_reader,
    readable_scope_roles,
)
from memory_console.console.reads import actor_trail
from memory_console.console.rendering import render_page
from memory_core.accounts.principals import Principal
from memory_core.ledger import access_log
from memory_core.ledger.attribution import forgotten_events
from memory_core.models import Scope
from memory_core.rules.inputs import HOST_ID_MAX
from memory_core.rules.scopes import actor_scope
from memory_core.transcripts import thread_states

PAGE_SIZE = 50


def _param(request, name: str) -> str:
    return request.GET.get(name, "").strip()[:HOST_ID_MAX]


def _recent(user, actor_ref: str, before: str):
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


@console_view
@require_GET
def run_list(request):
    actor_ref = _param(request, "actor")
    before = _param(request, "before")
    runs, older, paged = _recent(request.user, actor_ref, before)
    states = thread_states(runs)
    for digest in runs:
        digest.kept = kept(digest)
        digest.thread_state = states[digest.id]
    context = {"runs": runs, "older": older, "paged": paged, "actor_ref": actor_ref}
    response = render_page(request, "console/runs.html", context, fragment="console/_run_rows.html")
    # The list shows queries and stats, no memory text: a row says who looked, and at whom.
    access_log.record(
        Principal.for_user(request.user),
        "run.list",
        200,
        actor_ref=actor_ref or None,
        count=len(runs),
    )
    return response


def _chain(user, chain) -> list[dict]:
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


@console_view
@require_GET
def run_detail(request, path):
    user = request.user
    digest = digest_for_reader(user, path)
    lines = list(digest.lines.select_related("memory__scope").order_by("n"))
    thread_state = thread_states([digest])[digest.id]
    context = {
        "digest": digest,
        "actor_ref": digest.actor.ref,
        "trail": actor_trail(user, digest.actor),
        "rows": line_rows(user, lines),
        "chain": _chain(user, digest.chain),
        "thread_state": thread_state,
        "kept": kept(digest),
    }
    response = render_page(request, "console/run.html", context)
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
