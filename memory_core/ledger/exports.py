"""Exports with proofs: the ledger and the access log as CSV or JSON Lines, streamed, each
with a manifest an auditor can check.

Streaming, in constant memory: rows are read in keyset batches (`id > last ORDER BY id
LIMIT n`, the primary key's index) up to a pinned bound `upto` (the highest id when the
export began), so a million-row export holds one batch at a time, and events appended while
it runs are not half in it. Both tables are append-only and their rows never change, so the
same filters and `upto` give the same bytes again: that is what makes a separate manifest
checkable (README, "Evidence").

The manifest: what was asked (filters, `upto`), what came out (rows, bytes, SHA-256 of the
file), and for the ledger, per stream, the first and last exported event and the stream's
head at `upto` (seq, hash) — the head hash that covers the exported events, to compare with
a signed checkpoint. It travels with the file: JSON Lines exports end with one
`{"manifest": {...}}` line (the SHA-256 covers every byte before it); every export also
answers at its `…/manifest` address, and the management commands write FILE.manifest.json.

Rows carry ids, scopes, principals, counts and lengths only (the ledger and the access log
never hold a key or a fact), so no forgotten text can appear in them.
"""

import csv
import hashlib
import io
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from django.db.models import Max
from django.utils import timezone

from memory_core.ledger.ledger import _jsonb_text, timestamp_text
from memory_core.models import AccessLog, LedgerEvent, Scope

FORMATS = ("csv", "jsonl")
# Rows read per query: big enough that the per-query cost vanishes, small enough to hold.
BATCH = 2000

LEDGER_COLUMNS = [
    "id",
    "stream",
    "seq",
    "kind",
    "scope",
    "principal",
    "actor_ref",
    "payload",
    "created_at",
    "prev_hash",
    "hash",
]
ACCESS_COLUMNS = [
    "id",
    "created_at",
    "channel",
    "principal",
    "actor_ref",
    "action",
    "outcome",
    "scope",
    "memory_ids",
    "count",
    "detail",
]


def ledger_record(event: LedgerEvent) -> dict:
    """An event as exported: the fields its hash covers, rendered as the hash renders them
    (ledger.canonical), so anyone can recompute `hash` from a row."""
    return {
        "id": event.id,
        "stream": event.stream,
        "seq": event.seq,
        "kind": event.kind,
        "scope": event.scope,
        "principal": event.principal,
        "actor_ref": event.actor_ref,
        "payload": event.payload,
        "created_at": timestamp_text(event.created_at),
        "prev_hash": event.prev_hash,
        "hash": event.hash,
    }


def access_record(row: AccessLog) -> dict:
    return {
        "id": row.id,
        "created_at": timestamp_text(row.created_at),
        "channel": row.channel,
        "principal": row.principal,
        "actor_ref": row.actor_ref,
        "action": row.action,
        "outcome": row.outcome,
        "scope": row.scope,
        "memory_ids": list(row.memory_ids),
        "count": row.count,
        "detail": row.detail,
    }


def upto_now(model) -> int:
    """The bound an export starting now pins: the highest id (an index probe)."""
    return model.objects.aggregate(top=Max("id"))["top"] or 0


def in_batches(rows, upto: int, size: int = BATCH) -> Iterator:
    """Every row of the queryset `rows` with id <= upto, in id order, `size` per query."""
    last = 0
    while True:
        batch = list(rows.filter(id__gt=last, id__lte=upto).order_by("id")[:size])
        if not batch:
            return
        yield from batch
        last = batch[-1].id


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, dict | list):
        # The payload as the hash covers it; lists (memory ids) as JSON arrays.
        return _jsonb_text(value)
    return str(value)


@dataclass
class StreamSpan:
    """What an export holds of one ledger stream."""

    first_seq: int
    last_seq: int
    last_hash: str
    count: int = 1


@dataclass
class Export:
    """One export being written: renders records, hashes and counts the bytes, and builds
    the manifest. `chunks(records)` yields the file, batch by batch."""

    name: str  # "ledger", "access", "attribution"
    fmt: str  # "csv" or "jsonl"
    filters: dict
    principal: str
    upto: int | None = None
    columns: list[str] | None = None
    # For JSON Lines: end the file with the manifest line.
    trailing_manifest: bool = True
    # Called with the manifest (before it is written) to add figures such as heads.
    finish: Callable[["Export", dict], None] | None = None
    rows: int = 0
    size: int = 0
    counts: dict = field(default_factory=dict)
    spans: dict[str, StreamSpan] = field(default_factory=dict)
    complete: bool = False

    def __post_init__(self):
        if self.fmt not in FORMATS:
            raise ValueError(f"format must be one of {FORMATS}")
        self._sha = hashlib.sha256()

    @property
    def sha256(self) -> str:
        return self._sha.hexdigest()

    def _emit(self, data: bytes) -> bytes:
        self._sha.update(data)
        self.size += len(data)
        return data

    def _csv_line(self, values) -> bytes:
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerow(values)
        return out.getvalue().encode()

    def render(self, record: dict) -> bytes:
        if self.fmt == "csv":
            return self._csv_line(_cell(record.get(c)) for c in self.columns)
        return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()

    def _note(self, record: dict) -> None:
        self.rows += 1
        kind = record.get("type")
        if kind:
            self.counts[kind] = self.counts.get(kind, 0) + 1
        if self.name == "ledger" or kind == "event":
            span = self.spans.get(record["stream"])
            if span is None:
                self.spans[record["stream"]] = StreamSpan(
                    record["seq"], record["seq"], record["hash"]
                )
            else:
                span.last_seq, span.last_hash = record["seq"], record["hash"]
                span.count += 1

    def chunks(self, records: Iterable[dict], per_chunk: int = 500) -> Iterator[bytes]:
        if self.fmt == "csv" and self.columns:
            yield self._emit(self._csv_line(self.columns))
        buffer = []
        for record in records:
            self._note(record)
            buffer.append(self.render(record))
            if len(buffer) >= per_chunk:
                yield self._emit(b"".join(buffer))
                buffer = []
        if buffer:
            yield self._emit(b"".join(buffer))
        self.complete = True
        if self.fmt == "jsonl" and self.trailing_manifest:
            line = json.dumps({"manifest": self.manifest()}, ensure_ascii=False)
            yield (line + "\n").encode()

    def manifest(self) -> dict:
        manifest = {
            "export": self.name,
            "format": self.fmt,
            "filters": self.filters,
            "upto": self.upto,
            "generated_at": timestamp_text(timezone.now()),
            "by": self.principal,
            "rows": self.rows,
            "bytes": self.size,
            "sha256": self._sha.hexdigest(),
        }
        if self.columns and self.fmt == "csv":
            manifest["columns"] = self.columns
        if self.counts:
            manifest["counts"] = dict(sorted(self.counts.items()))
        if self.fmt == "jsonl" and self.trailing_manifest:
            manifest["sha256_covers"] = "every byte before this line"
        if self.spans:
            manifest["streams"] = covering_heads(self.spans, self.upto)
        if self.finish is not None:
            self.finish(self, manifest)
        return manifest


# The head of one stream as it stood at `upto`: the last event with id <= upto (the
# (stream, seq) index, walked backwards from the top).
def _head_at(stream: str, upto: int | None):
    events = LedgerEvent.objects.filter(stream=stream)
    if upto is not None:
        events = events.filter(id__lte=upto)
    return events.order_by("-seq").values_list("seq", "hash").first()


def covering_heads(spans: dict[str, StreamSpan], upto: int | None) -> list[dict]:
    """Per exported stream: the span exported and the stream's head at `upto`, whose hash
    chains back over every exported event (and is what a checkpoint signs)."""
    heads = []
    for stream in sorted(spans):
        span = spans[stream]
        head = _head_at(stream, upto)
        heads.append(
            {
                "stream": stream,
                "events": span.count,
                "first_seq": span.first_seq,
                "last_seq": span.last_seq,
                "last_hash": span.last_hash,
                "head_seq": head[0] if head else None,
                "head_hash": head[1] if head else None,
            }
        )
    return heads


def ledger_heads(streams=None) -> list[dict]:
    """The current heads of `streams` (every stream when None): an access-log export's
    anchor in the chain's time. One probe of ledger_stream_seq_unique per stream (the
    streams are the top-level scopes' few hundred, from the scope table), never a walk of
    the ledger."""
    if streams is None:
        streams = Scope.objects.values_list("stream", flat=True).distinct()
    heads = []
    for stream in sorted(set(streams)):
        head = _head_at(stream, None)
        if head is not None:
            heads.append({"stream": stream, "head_seq": head[0], "head_hash": head[1]})
    return heads


def check(data: bytes, manifest: dict | None = None) -> dict:
    """Check an export against its manifest (the trailing line of a JSON Lines export when
    `manifest` is None): the SHA-256, the size and the row count. Returns the manifest;
    raises ValueError naming what does not hold. For auditors' scripts and the tests."""
    body = data
    if manifest is None:
        body, _, last = data.rstrip(b"\n").rpartition(b"\n")
        body = body + b"\n" if body else b""
        manifest = json.loads(last)["manifest"]
    if hashlib.sha256(body).hexdigest() != manifest["sha256"]:
        raise ValueError("sha256 does not match the manifest")
    if len(body) != manifest["bytes"]:
        raise ValueError("size does not match the manifest")
    lines = body.count(b"\n") - (1 if manifest["format"] == "csv" else 0)
    if manifest["format"] == "jsonl" and lines != manifest["rows"]:
        raise ValueError("row count does not match the manifest")
    if manifest["format"] == "csv":
        rows = sum(1 for _ in csv.reader(io.StringIO(body.decode()))) - 1
        if rows != manifest["rows"]:
            raise ValueError("row count does not match the manifest")
    return manifest


# --- the operators' commands (export_ledger, export_access) ----------------------------------


def filter_ledger(
    events,
    *,
    kind=None,
    scope=None,
    principal=None,
    since=None,
    until=None,
    stream=None,
    seq_from=None,
    seq_to=None,
):
    """The ledger page's filters (exact kind, scope, principal; a time range) plus a stream
    and a sequence range, as the commands take them."""
    for name, value in (
        ("kind", kind),
        ("scope", scope),
        ("principal", principal),
        ("stream", stream),
    ):
        if value:
            events = events.filter(**{name: value})
    if since is not None:
        events = events.filter(created_at__gte=since)
    if until is not None:
        events = events.filter(created_at__lt=until)
    if seq_from is not None:
        events = events.filter(seq__gte=seq_from)
    if seq_to is not None:
        events = events.filter(seq__lte=seq_to)
    return events


def filter_access(
    rows,
    *,
    principal=None,
    actor=None,
    action=None,
    outcome=None,
    refused=False,
    since=None,
    until=None,
):
    """The access-log page's filters, as the commands take them."""
    for name, value in (
        ("principal", principal),
        ("actor_ref", actor),
        ("action", action),
        ("outcome", outcome),
    ):
        if value:
            rows = rows.filter(**{name: value})
    if refused:
        rows = rows.filter(outcome__gte=400)
    if since is not None:
        rows = rows.filter(created_at__gte=since)
    if until is not None:
        rows = rows.filter(created_at__lt=until)
    return rows


def write_files(export: Export, records, path, progress=None) -> dict:
    """Write the export to `path` and its manifest to `path`.manifest.json; return the
    manifest. The file is written as it is read, batch by batch (constant memory)."""
    from pathlib import Path

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)

    def counted():
        for record in records:
            if progress is not None:
                progress(1)
            yield record

    with path.open("wb") as out:
        for chunk in export.chunks(counted()):
            out.write(chunk)
    manifest = export.manifest()
    manifest_path(path).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    return manifest


def manifest_path(path):
    from pathlib import Path

    return Path(f"{path}.manifest.json")
