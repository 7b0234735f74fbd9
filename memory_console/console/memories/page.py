"""The memory page: one memory, its version chain, and everything recorded about it
(reads.py). Rendered by the page's view and, with the result of an action inside, by the
memory's actions (views.py) and by the conflicts page's decisions when a plain POST's value
is refused (conflicts/views.py)."""

from django.urls import reverse
from django.utils import timezone

from memory_console.console.common.cursors import section_cursors, section_links
from memory_console.console.common.rendering import render_page
from memory_console.console.ledger.payloads import mark_payloads
from memory_console.console.memories import reads
from memory_core.accounts.permissions import can_administer, role_for
from memory_core.accounts.principals import Principal
from memory_core.ledger import access_log
from memory_core.models import Memory
from memory_core.models.access import Role
from memory_core.rules.names import ref_of_scope
from memory_core.shapes import origin, resolving_threads
from memory_core.writes import promotion_targets


def _paged(request, memory: Memory, rows, prefix: str) -> dict:
    """One page of a history (`<prefix>before=`/`after=`), its links and its total."""
    page, total, more = reads.paged(rows, section_cursors(request, prefix))
    return {
        "rows": page.rows,
        "links": section_links(
            request, page, prefix, path=reverse("console:memory", kwargs={"uid": memory.uid})
        ),
        "total": total,
        "more": more,
    }


def memory_context(request, memory: Memory, *, errors=None, posted=None) -> dict:
    user = request.user
    principal = Principal.for_user(user)
    role = role_for(user, memory.scope)
    is_admin = role == Role.ADMIN
    versions = reads.versions(memory)
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
        "promotions": reads.promotions(memory),
        "promoted_from_readable": memory.promoted_from_id is not None
        and role_for(user, memory.promoted_from.scope) is not None,
        "targets": targets,
        "embedding": reads.embedding(memory),
        "ledger_events": mark_payloads(user, reads.ledger_events(memory, uids)),
        "access": _paged(request, memory, reads.access_rows(uids), "access_"),
        "runs": _paged(request, memory, reads.carrying_lines(user, uids), "runs_"),
        "errors": errors or {},
        "posted": posted or {},
    }


def render_memory(request, memory: Memory, *, errors=None, posted=None, notice=None, status=200):
    """The page, or for htmx its content fragment (memory.html#memory-content), which an
    inline action swaps in with its `notice` (common/actions.Notice) inside."""
    context = memory_context(request, memory, errors=errors, posted=posted)
    context["notice"] = notice
    response = render_page(
        request,
        "console/memories/memory.html",
        context,
        fragment="console/memories/memory.html#memory-content",
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
