"""Exports with proofs (docs/administrators/console.md, "Addresses"): the ledger, the access log
and an
attribution bundle, for whoever reads them in the console — auditors and administrators
within their grants, superusers whole.

The same filters as the pages (ledger/reads.py), plus, for the ledger, a stream and a
sequence range. Streamed (StreamingHttpResponse over keyset batches,
memory_core/ledger/exports.py), so an export of a million events holds one batch at a
time. Each export pins `upto` (the highest row id when it began) and `at` (the instant
relative windows such as `window=24h` are measured from); its manifest answers at the same
address plus `/manifest` with those pinned (the `X-Export-Manifest` header gives it), and a
JSON Lines export also ends with it. An export is access-logged when it ends (`export.*`,
with its row count and SHA-256).

Every parameter is checked before the response begins, since a stream cannot turn into
an error once its first byte is sent: console_view's check (common/parameters.py); then
that each parameter is one the export reads, given once (a misspelt filter would export
every row); then each filter, a malformed one, one no row can hold, or an ambiguous name
being a 422 here where the page ignores it or says so (export_forms.py, runs/forms.py).
Refusals are `{"detail": ...}`, as scripts read them.

Names are read as the user types them on the pages (common/names.py), and each page links
its export with its filters as it applied them (export_forms.export_offer).
"""

from datetime import datetime

from django.http import JsonResponse, StreamingHttpResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode
from django.views.decorators.http import require_GET

from memory_console.console.common.access import audit_reach, console_view
from memory_console.console.common.parameters import unexpected
from memory_console.console.ledger.export_forms import LedgerRange, Pinned, strict
from memory_console.console.ledger.forms import AccessFilter, LedgerFilter
from memory_console.console.ledger.reads import (
    attribution_bundle,
    filtered_events,
    filtered_rows,
    in_range,
)
from memory_console.console.runs.forms import AttributionQuery
from memory_console.console.runs.reads import attribution_lines
from memory_console.routers import on_this_replica
from memory_core.accounts.principals import Principal
from memory_core.errors import Invalid
from memory_core.ledger import access_log, exports
from memory_core.ledger.ledger import timestamp_text
from memory_core.models import AccessLog, LedgerEvent

CONTENT_TYPES = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson; charset=utf-8"}
# An attribution bundle's prompt lines at most (a line pasted from a busy prompt can have
# been carried by many runs); the manifest says when there were more.
MAX_BUNDLE_LINES = 5000


# The parameters each export reads: its page's filters, and its own.
LEDGER_PARAMETERS = frozenset(
    [*LedgerFilter.base_fields, *LedgerRange.base_fields, *Pinned.base_fields]
)
ACCESS_PARAMETERS = frozenset([*AccessFilter.base_fields, *Pinned.base_fields])
ATTRIBUTION_PARAMETERS = frozenset(AttributionQuery.base_fields)


def _only(request, allowed) -> None:
    """Invalid for a parameter the export does not read, or one given twice."""
    problem = unexpected(request.GET, allowed)
    if problem is not None:
        raise Invalid(problem)


def _pinned(request, model) -> tuple[int, datetime]:
    """`upto` and `at` from the query (a manifest, or a repeated export), else now."""
    pinned = Pinned(request.GET).cleaned()
    at = pinned["at"] or timezone.now()
    upto = pinned["upto"]
    return (exports.upto_now(model) if upto is None else upto), at


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
    _only(request, LEDGER_PARAMETERS)
    upto, at = _pinned(request, LedgerEvent)
    form = strict(LedgerFilter(request.GET, user=request.user))
    events = filtered_events(request.user, form, now=at)
    narrowed = LedgerRange(request.GET).cleaned()
    stream, seq_from, seq_to = narrowed["stream"], narrowed["seq_from"], narrowed["seq_to"]
    events = in_range(events, stream, seq_from, seq_to)
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
    _only(request, ACCESS_PARAMETERS)
    upto, at = _pinned(request, AccessLog)
    form = strict(AccessFilter(request.GET, user=request.user))
    rows = filtered_rows(request.user, form, now=at)
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


@console_view(json_errors=True)
@require_GET
def attribution_export(request):
    user = request.user
    _only(request, ATTRIBUTION_PARAMETERS)
    pasted, run_id, actor_ref = AttributionQuery(request.GET, user=user).strict_query()
    lines = attribution_lines(user, pasted, run_id, actor_ref, MAX_BUNDLE_LINES + 1)
    truncated = len(lines) > MAX_BUNDLE_LINES
    lines = lines[:MAX_BUNDLE_LINES]
    named, records = attribution_bundle(user, lines)

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
