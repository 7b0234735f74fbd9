"""The ledger events and access-log rows a user may read, filtered as on their pages.

Shared by the ledger and access-log pages and their exports (views/exports.py): the same
filters must select the same rows on the page and in the file. Unordered: pages page by id
(newest first), exports read in keyset batches (oldest first).
"""

from django.utils import timezone

from memory_console.console.access import (
    access_rows_for_reader,
    digest_lines_for_reader,
    ledger_events_for_reader,
    readable_scope_roles,
)
from memory_console.console.forms import REFUSED_FROM, AccessFilter, LedgerFilter
from memory_core.ledger.attribution import MAX_LINE_CHARS, line_forms, lines_showing
from memory_core.models import Memory
from memory_core.rules.inputs import HOST_ID_MAX


def filtered_events(request, form: LedgerFilter, now=None):
    """The readable events matching the filters."""
    events = ledger_events_for_reader(request.user)
    values = form.values()
    for name in ("kind", "scope", "principal"):
        if values[name]:
            events = events.filter(**{name: values[name]})
    return _within(events, form, now)


def who_filters(rows, values: dict):
    """The access-log filters on who, for whom and what (not on outcome or time)."""
    if values["principal"]:
        rows = rows.filter(principal=values["principal"])
    if values["actor"]:
        rows = rows.filter(actor_ref=values["actor"])
    if values["action"]:
        rows = rows.filter(action=values["action"])
    return rows


def filtered_rows(request, form: AccessFilter, now=None):
    """The readable access-log rows matching every filter."""
    values = form.values()
    rows = who_filters(access_rows_for_reader(request.user), values)
    if values["outcome"]:
        rows = rows.filter(outcome=int(values["outcome"]))
    if values["refused"]:
        rows = rows.filter(outcome__gte=REFUSED_FROM)
    return _within(rows, form, now)


def _within(rows, form, now):
    """`rows` created within the form's time filters (relative ones counted from `now`)."""
    since, until = form.bounds(now or timezone.now())
    if since is not None:
        rows = rows.filter(created_at__gte=since)
    if until is not None:
        rows = rows.filter(created_at__lt=until)
    return rows


def attribution_query(params) -> tuple[str, str, str]:
    """(pasted line, run id, actor ref) from the attribution page's query (also its
    export's), bounded; a pasted text that cannot be a prompt line counts as none."""
    pasted = params.get("line", "")[:MAX_LINE_CHARS]
    run_id = params.get("run", "").strip()[:HOST_ID_MAX]
    actor_ref = params.get("actor", "").strip()[:HOST_ID_MAX]
    return (pasted if line_forms(pasted) else ""), run_id, actor_ref


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


# The memory ids an access-log row names, shown at most (a bulk action can name hundreds).
SHOWN_MEMORY_IDS = 5


def mark_memory_links(user, rows) -> None:
    """Give each access-log row `memory_refs`: its first memory ids, each with whether the
    user may open that memory (a link) or not (the id alone: it is outside their grants, or
    forgotten), and `more_memory_ids`. One query for the page; ids only, never keys or text."""
    shown = {uid for row in rows for uid in row.memory_ids[:SHOWN_MEMORY_IDS]}
    readable = set()
    if shown:
        roles = readable_scope_roles(user)
        found = Memory.objects.filter(uid__in=sorted(shown)).values_list("uid", "scope_id")
        readable = {uid for uid, scope_id in found if roles is None or scope_id in roles}
    for row in rows:
        row.memory_refs = [
            {"id": uid, "readable": uid in readable} for uid in row.memory_ids[:SHOWN_MEMORY_IDS]
        ]
        row.more_memory_ids = max(0, len(row.memory_ids) - SHOWN_MEMORY_IDS)
