"""Appending to and verifying the hash-chained ledger.

Each stream is its own chain: `hash = sha256(canonical(event))`, where the canonical form
includes `prev_hash`. Appends to one stream serialise on a transaction-scoped advisory lock,
so concurrent writers queue instead of forking the chain; the unique constraints on
(stream, seq) and (stream, prev_hash) are the backstop if that lock is ever bypassed.
"""

import hashlib
import json
from dataclasses import dataclass

from django.db import connection, transaction
from django.utils import timezone

from memory_core.locks import advisory_xact_lock
from memory_core.models import LedgerEvent

GENESIS = "0" * 64
# Payloads are ids, scopes, counts and lengths. A key is as revealing as the fact it names,
# so neither may ever be written here; append() refuses payload fields outside this list.
ALLOWED_PAYLOAD_FIELDS = frozenset(
    {
        "memory",
        "memories",
        "supersedes",
        "promoted_from",
        "retired_original",
        "chars",
        "reason_chars",
        "versions",
        "digests",
        "lines",
        "pinned",
        "target",
        "from_scope",
        "api_key",
        "reach",
        "user",
        "role",
        "scopes",
        "messages",
        "threads",
        "count",
    }
)


def canonical(fields: dict) -> bytes:
    """The one serialisation hashed: sorted keys, no whitespace, UTF-8."""
    return json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def event_fields(event) -> dict:
    return {
        "stream": event.stream,
        "seq": event.seq,
        "kind": event.kind,
        "scope": event.scope,
        "principal": event.principal,
        "actor": event.actor_ref,
        "payload": event.payload,
        "created_at": event.created_at.isoformat(timespec="microseconds"),
        "prev_hash": event.prev_hash,
    }


def event_hash(event) -> str:
    return hashlib.sha256(canonical(event_fields(event))).hexdigest()


def append(kind: str, scope, principal, payload: dict, actor_ref: str | None = None):
    """Add one event to the stream of `scope` (a Scope). Must run inside the caller's atomic."""
    unknown = set(payload) - ALLOWED_PAYLOAD_FIELDS
    if unknown:
        raise ValueError(f"ledger payload fields not allowed: {sorted(unknown)}")
    stream = scope.stream
    with transaction.atomic():
        advisory_xact_lock("ledger", stream)
        last = (
            LedgerEvent.objects.filter(stream=stream)
            .order_by("-seq")
            .values_list("seq", "hash")
            .first()
        )
        seq, prev_hash = (last[0] + 1, last[1]) if last else (1, GENESIS)
        event = LedgerEvent(
            stream=stream,
            seq=seq,
            kind=kind,
            scope=scope.token,
            principal=principal.name,
            actor_ref=actor_ref,
            # JSON round trip: the stored payload must hash the same when read back.
            payload=json.loads(canonical(payload)),
            created_at=timezone.now(),
            prev_hash=prev_hash,
        )
        event.hash = event_hash(event)
        event.save(force_insert=True)
    return event


@dataclass(frozen=True)
class Verification:
    ok: bool
    count: int
    broken: LedgerEvent | None = None
    problem: str = ""


_VERIFY_FIELDS = (
    "id",
    "seq",
    "kind",
    "scope",
    "principal",
    "actor_ref",
    "payload",
    "created_at",
    "prev_hash",
    "hash",
)


def verify(progress=None, streams=None) -> Verification:
    """Walk every stream (or only those named in `streams`) in order; report the first event
    whose link or hash does not hold. The console passes the streams a tenant's auditor
    reads, so a check never walks, counts or names another tenant's events.

    Rows are read as tuples, not model instances: building an object per event cost more
    than hashing it.
    """
    count = 0
    names = LedgerEvent.objects.values_list("stream", flat=True).distinct().order_by("stream")
    if streams is not None:
        names = names.filter(stream__in=list(streams))
    for stream in names:
        expected_prev, expected_seq = GENESIS, 1
        rows = (
            LedgerEvent.objects.filter(stream=stream).order_by("seq").values_list(*_VERIFY_FIELDS)
        )
        for (
            pk,
            seq,
            kind,
            scope,
            principal,
            actor,
            payload,
            created_at,
            prev,
            stored,
        ) in rows.iterator(chunk_size=5000):
            fields = {
                "stream": stream,
                "seq": seq,
                "kind": kind,
                "scope": scope,
                "principal": principal,
                "actor": actor,
                "payload": payload,
                "created_at": created_at.isoformat(timespec="microseconds"),
                "prev_hash": prev,
            }
            problem = ""
            if seq != expected_seq:
                problem = f"expected seq {expected_seq}, found {seq}"
            elif prev != expected_prev:
                problem = "prev_hash does not match the previous event's hash"
            elif hashlib.sha256(canonical(fields)).hexdigest() != stored:
                problem = "hash does not match the event's contents"
            if problem:
                broken = LedgerEvent.objects.get(pk=pk)
                return Verification(ok=False, count=count, broken=broken, problem=problem)
            expected_prev, expected_seq = stored, seq + 1
            count += 1
            if progress is not None:
                progress(1)
    return Verification(ok=True, count=count)


def total_events() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memory_core_ledgerevent")
        return cursor.fetchone()[0]
