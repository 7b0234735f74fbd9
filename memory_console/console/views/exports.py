"""Exports with proofs (CONSOLE.md, "Addresses"): the ledger, the access log and an
attribution bundle, for whoever reads them in the console — auditors and administrators
within their grants, superusers whole.

The same filters as the pages (memory_console/console/audit_rows.py), plus, for the
ledger, a stream and a sequence range. Streamed (StreamingHttpResponse over keyset
batches, memory_core/ledger/exports.py), so an export of a million events holds one batch at a
time. Each export pins `upto` (the highest row id when it began) and `at` (the instant
relative windows such as `window=24h` are measured from); its manifest answers at the same
address plus `/manifest` with those pinned (the `X-Export-Manifest` header gives it), and a
JSON Lines export also ends with it. An export is access-logged when it ends (`export.*`,
with its row count and SHA-256).

Every parameter is checked before the response begins, since a stream cannot turn into
an error once its first byte is sent: console_view's check (console/parameters.py), then
each filter, a malformed one being a 422 here where the page ignores it. Refusals are
`{"detail": ...}`, as scripts read them.
"""

from datetime import UTC, datetime
from functools import reduce
from operator import or_

from django.db.models import Q
from django.http import JsonResponse, StreamingHttpResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode
from django.views.decorators.http import require_GET

from memory_console.console.access import (
    audit_reach,
    console_view,
    ledger_events_for_reader,
    origin_threads_for_reader,
    readable_scope_roles,
)
from memory_console.console.audit_rows import (
    attribution_lines,
    attribution_query,
    filtered_events,
    filtered_rows,
)
from memory_console.console.forms import AccessFilter, LedgerFilter
from memory_console.console.parameters import BIGINT_MAX
from memory_console.routers import on_this_replica
from memory_core.accounts.principals import Principal
from memory_core.errors import Invalid
from memory_core.ledger import access_log, exports
from memory_core.ledger.attribution import forgotten_events, run_window
from memory_core.ledger.ledger import timestamp_text
from memory_core.models import AccessLog, LedgerEvent, Memory
from memory_core.shapes import origin

CONTENT_TYPES = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson; charset=utf-8"}
# An attribution bundle's prompt lines at most (a line pasted from a busy prompt can have
# been carried by many runs); the manifest says when there were more.
MAX_BUNDLE_LINES = 5000
# The earliest `at` an export may be pinned to (nothing here is older than the epoch).
EARLIEST_AT = datetime(1970, 1, 1, tzinfo=UTC)


def _int_param(request, name: str) -> int | None:
    raw = request.GET.get(name, "").strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise Invalid(f"{name} must be a whole number") from None
    if value < 0:
        raise Invalid(f"{name} must not be negative")
    if value > BIGINT_MAX:
        raise Invalid(f"{name} must be at most {BIGINT_MAX}")
    return value


def _pinned(request, model) -> tuple[int, datetime]:
    """`upto` and `at` from the query (a manifest, or a repeated export), else now."""
    upto = _int_param(request, "upto")
    raw_at = request.GET.get("at", "").strip()
    at = timezone.now()
    if raw_at:
        try:
            at = datetime.fromisoformat(raw_at.replace("Z", "+00:00"))
        except ValueError:
            raise Invalid("at must be an ISO 8601 time") from None
        if at.tzinfo is None:
            raise Invalid("at must name its time zone")
        try:
            at = at.astimezone(UTC)
        except OverflowError:
            at = None
        # Relative windows are measured back from `at`: it must leave room for them.
        if at is None or at < EARLIEST_AT:
            raise Invalid(f"at must lie between {EARLIEST_AT:%Y-%m-%d} and 9999-12-31")
    return (exports.upto_now(model) if upto is None else upto), at


def _filters_form(form_class, request):
    """The page's filters, each of which must hold. The page ignores a malformed one (a
    stale bookmark still shows the page); an export that did would prove more than was
    asked for, every row where a window was meant."""
    form = form_class(request.GET)
    if not form.is_valid():
        problems = "; ".join(f"{name}: {' '.join(errors)}" for name, errors in form.errors.items())
        raise Invalid(f"malformed filter ({problems})")
    return form


def _time_filters(form, at) -> dict:
    since, until = form.bounds(at)
    return {
        "since": timestamp_text(since) if since else None,
        "until": timestamp_text(until) if until else None,
    }


def _manifest_url(request, name: str, upto: int, at: datetime) -> str:
    query = {k: v for k, v in request.GET.items() if k not in ("upto", "at") and v}
    query.update(upto=upto, at=timestamp_text(at))
    return f"{reverse(f'console:export-{name}-manifest')}?{urlencode(query)}"


def _logged(export: exports.Export, user, action: str, chunks, memory_ids=()):
    """The file, and its access-log row once it has been sent (or abandoned)."""
    try:
        yield from chunks
    finally:
        access_log.record(
            Principal.for_user(user),
            action,
            200,
            memory_ids=memory_ids,
            count=export.rows,
            detail={
                "format": export.fmt,
                "upto": export.upto,
                "complete": export.complete,
                "sha256": export.sha256 if export.complete else None,
            },
        )


def _respond(request, export, records, filename: str, action: str, manifest=None, ids=()):
    """The streamed file; `manifest` = (its manifest's URL name, the pinned `at`)."""
    chunks = export.chunks(records)
    response = StreamingHttpResponse(
        on_this_replica(_logged(export, request.user, action, chunks, ids)),
        content_type=CONTENT_TYPES[export.fmt],
    )
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    if manifest is not None:
        url = _manifest_url(request, manifest[0], export.upto, manifest[1])
        response["X-Export-Manifest"] = url
        response["Link"] = f'<{url}>; rel="describedby"'
    return response


def _manifest_response(request, export, records, action: str):
    """The manifest alone: the export re-read (pinned, so the same bytes) and hashed."""
    for _ in export.chunks(records):
        pass
    manifest = export.manifest()
    access_log.record(
        Principal.for_user(request.user),
        action,
        200,
        count=export.rows,
        detail={"format": export.fmt, "upto": export.upto, "manifest": True},
    )
    return JsonResponse(manifest, json_dumps_params={"indent": 2})


# --- the ledger ------------------------------------------------------------------------------


def _ledger_export(request, fmt: str):
    upto, at = _pinned(request, LedgerEvent)
    form = _filters_form(LedgerFilter, request)
    events = filtered_events(request, form, now=at)
    stream = request.GET.get("stream", "").strip()
    seq_from, seq_to = _int_param(request, "seq_from"), _int_param(request, "seq_to")
    if stream:
        events = events.filter(stream=stream)
    if seq_from is not None:
        events = events.filter(seq__gte=seq_from)
    if seq_to is not None:
        events = events.filter(seq__lte=seq_to)
    values = form.values()
    filters = {
        "kind": values["kind"] or None,
        "scope": values["scope"] or None,
        "principal": values["principal"] or None,
        **_time_filters(form, at),
        "stream": stream or None,
        "seq_from": seq_from,
        "seq_to": seq_to,
    }
    export = exports.Export(
        "ledger",
        fmt,
        filters,
        Principal.for_user(request.user).name,
        upto=upto,
        columns=exports.LEDGER_COLUMNS,
    )
    records = (exports.ledger_record(e) for e in exports.in_batches(events, upto))
    return export, records, at


@console_view(json_errors=True)
@require_GET
def ledger_export(request, fmt: str):
    export, records, at = _ledger_export(request, fmt)
    return _respond(
        request, export, records, f"ledger.{fmt}", "export.ledger", (f"ledger-{fmt}", at)
    )


@console_view(json_errors=True)
@require_GET
def ledger_manifest(request, fmt: str):
    export, records, _ = _ledger_export(request, fmt)
    return _manifest_response(request, export, records, "export.ledger")


# --- the access log --------------------------------------------------------------------------


def _access_export(request, fmt: str):
    upto, at = _pinned(request, AccessLog)
    form = _filters_form(AccessFilter, request)
    rows = filtered_rows(request, form, now=at)
    values = form.values()
    filters = {
        "principal": values["principal"] or None,
        "actor": values["actor"] or None,
        "action": values["action"] or None,
        "outcome": int(values["outcome"]) if values["outcome"] else None,
        "refused": bool(values["refused"]),
        **_time_filters(form, at),
    }
    reach = audit_reach(request.user)

    def anchor(export, manifest):
        # The access log has no chain of its own: the ledger heads the reader's streams had
        # when the manifest was made place it in the chain's time.
        manifest["ledger_heads"] = exports.ledger_heads(None if reach.everything else reach.streams)

    export = exports.Export(
        "access",
        fmt,
        filters,
        Principal.for_user(request.user).name,
        upto=upto,
        columns=exports.ACCESS_COLUMNS,
        finish=anchor,
    )
    records = (exports.access_record(r) for r in exports.in_batches(rows, upto))
    return export, records, at


@console_view(json_errors=True)
@require_GET
def access_export(request, fmt: str):
    export, records, at = _access_export(request, fmt)
    return _respond(
        request, export, records, f"access.{fmt}", "export.access", (f"access-{fmt}", at)
    )


@console_view(json_errors=True)
@require_GET
def access_manifest(request, fmt: str):
    export, records, _ = _access_export(request, fmt)
    return _manifest_response(request, export, records, "export.access")


# --- an attribution bundle -------------------------------------------------------------------


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


def _bundle(user, lines) -> tuple[list[str], object]:
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


@console_view(json_errors=True)
@require_GET
def attribution_export(request):
    user = request.user
    pasted, run_id, actor_ref = attribution_query(request.GET)
    if not (pasted or run_id):
        raise Invalid("give a prompt line (?line=) or a run id (?run=)")
    lines = attribution_lines(user, pasted, run_id, actor_ref, MAX_BUNDLE_LINES + 1)
    truncated = len(lines) > MAX_BUNDLE_LINES
    lines = lines[:MAX_BUNDLE_LINES]
    named, records = _bundle(user, lines)

    def describe(export, manifest):
        manifest["truncated"] = truncated

    # The pasted line is a fact: the manifest (and the access log) say only that one was
    # given, never what it was.
    filters = {"line": bool(pasted), "run": run_id or None, "actor": actor_ref or None}
    export = exports.Export(
        "attribution", "jsonl", filters, Principal.for_user(user).name, finish=describe
    )
    return _respond(
        request, export, records, "attribution.jsonl", "export.attribution", None, named
    )
