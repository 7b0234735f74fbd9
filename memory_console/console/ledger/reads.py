"""The ledger events and access-log rows a user may read, filtered as on their pages, and
what the pages and exports show of them.

The same filters serve the ledger and access-log pages and their exports
(export_views.py): they must select the same rows on the page and in the file. Unordered:
pages page by id (newest first), exports read in keyset batches (oldest first).
"""

from datetime import timedelta
from functools import reduce
from operator import or_

from django.db.models import Count, Q
from django.utils import timezone

from memory_console.console.common.access import (
    access_rows_for_reader,
    ledger_events_for_reader,
    origin_threads_for_reader,
    readable_scope_roles,
)
from memory_console.console.ledger.forms import REFUSED_FROM, AccessFilter, LedgerFilter
from memory_core.ledger import exports
from memory_core.ledger.attribution import forgotten_events, run_window
from memory_core.ledger.ledger import timestamp_text
from memory_core.models import LedgerEvent, Memory
from memory_core.shapes import origin


def filtered_events(user, form: LedgerFilter, now=None):
    """The readable events matching the filters."""
    events = ledger_events_for_reader(user)
    values = form.values()
    for name in ("kind", "scope", "principal"):
        if values[name]:
            events = events.filter(**{name: values[name]})
    return _within(events, form, now)


def in_range(events, stream: str, seq_from: int | None, seq_to: int | None):
    """`events` of one stream and within a range of sequence numbers (an export's own
    narrowing, ledger/forms.LedgerRange), each when given."""
    if stream:
        events = events.filter(stream=stream)
    if seq_from is not None:
        events = events.filter(seq__gte=seq_from)
    if seq_to is not None:
        events = events.filter(seq__lte=seq_to)
    return events


def who_filters(rows, values: dict):
    """The access-log filters on who, for whom and what (not on outcome or time)."""
    if values["principal"]:
        rows = rows.filter(principal=values["principal"])
    if values["actor"]:
        rows = rows.filter(actor_ref=values["actor"])
    if values["action"]:
        rows = rows.filter(action=values["action"])
    return rows


def filtered_rows(user, form: AccessFilter, now=None):
    """The readable access-log rows matching every filter."""
    values = form.values()
    rows = who_filters(access_rows_for_reader(user), values)
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


# --- the access-log page's refusals ---------------------------------------------------------

# Without a chosen window, the refusal count covers the last day.
DEFAULT_COUNT_WINDOW = timedelta(hours=24)
WINDOW_WORDS = {
    "1h": "in the last hour",
    "24h": "in the last 24 hours",
    "7d": "in the last 7 days",
    "30d": "in the last 30 days",
}
TOP_PROBERS = 5


def refusal_window(form: AccessFilter, now) -> tuple:
    """(since, until, words): the selected window, or the last 24 hours without one."""
    values = form.values()
    since, until = form.bounds(now)
    if since is None:
        return now - DEFAULT_COUNT_WINDOW, until, "in the last 24 hours"
    if values["window"]:
        return since, until, WINDOW_WORDS[values["window"]]
    words = f"since {since:%Y-%m-%d %H:%M} UTC"
    if until is not None:
        words += f" until {until:%Y-%m-%d %H:%M} UTC"
    return since, until, words


def refusals_in_window(user, form: AccessFilter, now=None):
    """The readable refusals of the window, with the page's who/for-whom/what filters.
    Bounded by the window's start, so it never counts the whole log."""
    now = now or timezone.now()
    since, until, words = refusal_window(form, now)
    rows = who_filters(access_rows_for_reader(user), form.values()).filter(
        outcome__gte=REFUSED_FROM, created_at__gte=since
    )
    if until is not None:
        rows = rows.filter(created_at__lt=until)
    return rows, words


def refusals(user, form: AccessFilter, now) -> dict:
    """The refusals the page counts above its rows: how many, over which window in words,
    and the principals refused most."""
    refused, words = refusals_in_window(user, form, now)
    probers = list(
        refused.values("principal")
        .annotate(n=Count("id"))
        .order_by("-n", "principal")[:TOP_PROBERS]
    )
    return {"refused_count": refused.count(), "refused_words": words, "probers": probers}


# --- an attribution bundle (/exports/attribution.jsonl) -------------------------------------


def _memory_record(memory: Memory, threads, carried: set[str]) -> dict:
    return {
        "type": "memory",
        "id": memory.uid,
        "lineage": str(memory.lineage),
        "scope": memory.scope.token,
        "key": memory.key,
        "text": memory.text,
        "author": memory.author,
        "pinned": memory.pinned,
        "tags": list(memory.tags),
        "created_at": timestamp_text(memory.created_at),
        "retired_at": timestamp_text(memory.retired_at) if memory.retired_at else None,
        "retired_reason": memory.retired_reason or None,
        "supersedes": memory.supersedes.uid if memory.supersedes_id else None,
        "promoted_from": memory.promoted_from.uid if memory.promoted_from_id else None,
        "origin": origin(memory, set(threads)),
        "carried": memory.uid in carried,
    }


def attribution_bundle(user, lines) -> tuple[list[str], object]:
    """(memory ids named, the bundle's records as a generator). Built from what the reader
    may read only: a memory outside the grants is named by id and marked unreadable; a
    forgotten one by id and the event that erased it (its text exists nowhere)."""
    carried = {line.memory_uid for line in lines}
    found = {m.uid: m for m in Memory.objects.filter(uid__in=list(carried)).select_related("scope")}
    roles = readable_scope_roles(user)
    readable = [m for m in found.values() if roles is None or m.scope_id in roles]
    versions = list(
        Memory.objects.filter(lineage__in={m.lineage for m in readable})
        .select_related("scope", "origin_actor", "supersedes", "promoted_from")
        .order_by("lineage", "created_at", "id")
    )
    version_ids = [v.uid for v in versions]
    threads = origin_threads_for_reader(
        user, {(v.origin_actor_id, v.origin_thread) for v in versions}
    )
    forgotten = forgotten_events(uid for uid in carried if uid not in found)
    named = list(dict.fromkeys([*carried, *version_ids]))

    def records():
        for line in lines:
            yield {
                "type": "line",
                "actor": line.digest.actor.ref,
                "run_id": line.digest.run_id,
                "run_at": timestamp_text(line.digest.created_at),
                "n": line.n,
                "text": line.text,
                "memory": line.memory_uid,
            }
        for version in versions:
            yield _memory_record(version, threads, carried)
        for uid in sorted(carried):
            if uid in found and found[uid] not in readable:
                yield {"type": "memory", "id": uid, "readable": False}
            elif uid not in found:
                event = forgotten.get(uid)
                yield {
                    "type": "forgotten",
                    "memory": uid,
                    "at": timestamp_text(event.created_at) if event else None,
                    "by": event.principal if event else None,
                }
        gone = [uid for uid in carried if uid not in found]
        if version_ids or gone:
            events = ledger_events_for_reader(user).filter(
                _about(version_ids) | _forgotten_about(gone)
            )
            for event in exports.in_batches(events, exports.upto_now(LedgerEvent)):
                yield {"type": "event", **exports.ledger_record(event)}
        seen = set()
        for version in versions:
            thread = threads.get((version.origin_actor_id, version.origin_thread))
            key = (version.origin_actor_id, version.origin_thread, version.origin_run)
            if thread is None or not version.origin_run or key in seen:
                continue
            seen.add(key)
            window, _ = run_window(thread, version.origin_run)
            for message in window:
                yield {
                    "type": "message",
                    "actor": thread.actor.ref,
                    "thread_id": thread.ref,
                    "run_id": message.run_id,
                    "role": message.role,
                    "text": message.text,
                    "created_at": timestamp_text(message.created_at),
                    "originating": message.run_id == version.origin_run,
                }

    return named, records()


def _about(uids):
    if not uids:
        return Q(pk__in=[])
    return (
        Q(payload__memory__in=uids)
        | Q(payload__supersedes__in=uids)
        | Q(kind="memory.promoted", payload__promoted_from__in=uids)
    )


def _forgotten_about(uids):
    if not uids:
        return Q(pk__in=[])
    return Q(kind="memory.forgotten") & reduce(
        or_, (Q(payload__memories__contains=[uid]) for uid in uids)
    )
