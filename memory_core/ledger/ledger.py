"""Appending to and verifying the hash-chained ledger.

Each stream is its own chain: `hash = sha256(canonical(event))`, where the canonical form
includes `prev_hash`. PostgreSQL computes the hash (memory_core_ledger_hash, migration 0005)
both when an event is appended and when the ledger is verified; canonical() below is the
same computation in Python, so anyone can check a ledger export without the database.

Appends to one stream serialise on a transaction-scoped advisory lock, so concurrent
writers queue instead of forking the chain; the unique constraints on (stream, seq) and
(stream, prev_hash) are the backstop if that lock is ever bypassed.
"""

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC

from django.db import connection
from django.db.models import Count
from django.utils import timezone
from psycopg.types.json import Jsonb

from memory_core.db import prepared
from memory_core.db.locks import lock_id
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
        # memory.reinstated / memory.reverted: the version whose text came back.
        "restores",
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
        # api_key.created: when the key stops working (keys.create_api_key).
        "expires_at",
        # user.deactivated / user.reactivated (users.set_active).
        "active",
        "user",
        "role",
        "scopes",
        "messages",
        "threads",
        "count",
        # actor.erased: counts of what an erasure removed (erasure.Erased).
        "api_keys",
        "republished",
        # The bulk action (memory_core/bulk.py) an event's change was part of.
        "bulk",
        # Gardening (memory_core/garden/decisions.py): the proposal a change carried out,
        # its kind, and the versions its approval wrote and retired (ids only).
        "proposal",
        "proposal_kind",
        "created",
        "retired",
        # capture.extracted (memory_core/capture/): the extraction a change was part of,
        # the last message it read (an id), and its counts.
        "extraction",
        "message",
        "written",
        "unchanged",
        "dropped",
    }
)


def _jsonb_text(value) -> str:
    """A JSON value exactly as PostgreSQL renders the jsonb holding it: object keys ordered
    by length, then bytes; ", " between items and ": " after keys; strings escaped as
    PostgreSQL escapes them (which is json.dumps's escaping with ensure_ascii off)."""
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: (len(k.encode()), k.encode()))
        return "{" + ", ".join(f"{_jsonb_text(k)}: {_jsonb_text(value[k])}" for k in keys) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_jsonb_text(v) for v in value) + "]"
    if isinstance(value, float):
        raise ValueError("ledger payloads hold ids, counts and lengths, never floats")
    return json.dumps(value, ensure_ascii=False)


def timestamp_text(moment) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def canonical(event) -> bytes:
    """The bytes an event's hash covers: the SQL function memory_core_ledger_hash
    (migration 0005) renders the same array as jsonb text; this is its Python twin."""
    fields = [
        event.stream,
        event.seq,
        event.kind,
        event.scope,
        event.principal,
        event.actor_ref,
        event.payload,
        timestamp_text(event.created_at),
        event.prev_hash,
    ]
    return _jsonb_text(fields).encode()


def event_hash(event) -> str:
    return hashlib.sha256(canonical(event)).hexdigest()


# The stream's lock, then its last event read and the next one appended, in one call:
# memory_core_ledger_append (ledger.sql), a function so that its INSERT takes its snapshot
# after the lock is held and sees whatever the previous holder committed. PostgreSQL
# computes the hash over the values it stores.
_APPEND = "SELECT * FROM memory_core_ledger_append(%s, %s, %s, %s, %s, %s, %s, %s, %s)"


def check_payload(payload: dict) -> None:
    """Refuse a payload field outside ALLOWED_PAYLOAD_FIELDS, or a value jsonb would not
    render back unchanged (a float)."""
    unknown = set(payload) - ALLOWED_PAYLOAD_FIELDS
    if unknown:
        raise ValueError(f"ledger payload fields not allowed: {sorted(unknown)}")
    _jsonb_text(payload)


def stream_lock(stream: str) -> int:
    """The advisory lock every appender of `stream` takes (memory_core.db.locks)."""
    return lock_id("ledger", stream)


def append(kind: str, scope, principal, payload: dict, actor_ref: str | None = None):
    """Add one event to the stream of `scope` (a Scope), inside the caller's transaction
    (or as a statement of its own): a failed append fails the change it records."""
    check_payload(payload)
    stream = scope.stream
    created_at = timezone.now()
    pk, seq, prev_hash, sealed = prepared.fetch_one(
        _APPEND,
        [
            stream_lock(stream),
            stream,
            kind,
            scope.token,
            principal.name,
            actor_ref,
            Jsonb(payload),
            created_at,
            GENESIS,
        ],
    )
    return LedgerEvent(
        id=pk,
        stream=stream,
        seq=seq,
        kind=kind,
        scope=scope.token,
        principal=principal.name,
        actor_ref=actor_ref,
        payload=payload,
        created_at=created_at,
        prev_hash=prev_hash,
        hash=sealed,
    )


@dataclass(frozen=True)
class Verification:
    ok: bool
    count: int
    broken: LedgerEvent | None = None
    problem: str = ""


# Verification is two passes over the ledger, each the fastest form PostgreSQL offers for
# its half (measured at 100k events: one windowed query that also hashed took 1.7-2.7 s;
# these two together 0.85 s).
#
# Seals: re-hash every event where it is stored, a plain scan in id ranges (big enough that
# PostgreSQL hashes each range in parallel workers; a query per stream is planned for one
# process and hashes at half the speed). Per stream, the range's event count and the
# lowest seq whose stored hash its contents do not reproduce.
_SEALS = """
    SELECT stream, count(*), min(seq) FILTER (WHERE NOT sealed) FROM (
        SELECT stream, seq,
               hash = memory_core_ledger_hash(stream, seq, kind, scope, principal,
                                              actor_ref, payload, created_at, prev_hash)
                   AS sealed
        FROM memory_core_ledgerevent
        WHERE id > %s AND id <= %s {streams}
    ) AS e
    GROUP BY stream
"""
# Links: per stream, the first event (in seq order) whose seq does not follow its
# predecessor's or whose prev_hash is not its predecessor's hash, with how many events
# precede it. One walk of the (stream, seq) index; no hashing, so the window is cheap.
_LINKS = """
    SELECT DISTINCT ON (stream) stream, id, seq, position, expected_seq,
           prev_hash = expected_prev
    FROM (
        SELECT stream, id, seq, prev_hash,
               row_number() OVER w - 1 AS position,
               lag(seq, 1, 0::bigint) OVER w + 1 AS expected_seq,
               lag(hash, 1, %s) OVER w AS expected_prev
        FROM memory_core_ledgerevent
        {where}
        WINDOW w AS (PARTITION BY stream ORDER BY seq)
    ) AS e
    WHERE seq <> expected_seq OR prev_hash <> expected_prev
    ORDER BY stream, seq
"""
# Ids re-hashed per query of the seal pass (and per progress step).
SEAL_RANGE = 250_000


def _rows(sql: str, params) -> list[tuple]:
    """Run one of the two passes unprepared, so PostgreSQL plans it for these very values.
    As a prepared statement (memory_core.db.prepared, planned once and generically) the seal
    pass cannot tell a range of 250,000 ids from a handful and scans it in one process; planned
    for the values it scans in parallel: at 1m events 2.3 s instead of 4.5 s."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _seal_failures(streams, progress) -> dict[str, int]:
    """{stream: lowest seq whose seal fails}, over every event (of `streams` if given)."""
    top = LedgerEvent.objects.order_by("-id").values_list("id", flat=True).first() or 0
    bottom = LedgerEvent.objects.order_by("id").values_list("id", flat=True).first() or 1
    sql = _SEALS.format(streams="AND stream = ANY(%s)" if streams is not None else "")
    failures: dict[str, int] = {}
    start = bottom - 1
    while start < top:
        end = start + SEAL_RANGE
        params = [start, end] + ([list(streams)] if streams is not None else [])
        scanned = 0
        for stream, count, bad in _rows(sql, params):
            scanned += count
            if bad is not None and (stream not in failures or bad < failures[stream]):
                failures[stream] = bad
        if progress is not None:
            progress(scanned)
        start = end
    return failures


def _link_failures(streams) -> dict[str, tuple]:
    """{stream: (id, seq, position, expected_seq, linked)} of its first broken link."""
    where = "WHERE stream = ANY(%s)" if streams is not None else ""
    params = [GENESIS] + ([list(streams)] if streams is not None else [])
    return {row[0]: row[1:] for row in _rows(_LINKS.format(where=where), params)}


def verify(progress=None, streams=None) -> Verification:
    """Check every stream (or only those named in `streams`) and report the first event,
    streams taken in name order and events in seq order, whose link or seal does not hold,
    with the count of events verified before it. The console passes the streams a tenant's
    auditor reads, so a check never walks, counts or names another tenant's events.

    PostgreSQL hashes the events where they are stored; only suspects cross the wire.
    """
    sizes = LedgerEvent.objects.order_by("stream").values_list("stream").annotate(n=Count("id"))
    if streams is not None:
        streams = sorted(set(streams))
        sizes = sizes.filter(stream__in=streams)
    seals = _seal_failures(streams, progress)
    links = _link_failures(streams)
    count = 0
    for stream, size in sizes:
        link, seal = links.get(stream), seals.get(stream)
        if link is None and seal is None:
            count += size
            continue
        if link is not None and (seal is None or link[1] <= seal):
            pk, seq, position, expected_seq, linked = link
            if seq != expected_seq:
                problem = f"expected seq {expected_seq}, found {seq}"
            else:
                problem = "prev_hash does not match the previous event's hash"
            event = LedgerEvent.objects.get(pk=pk)
        else:
            # Every event before it links, so their seqs run 1 .. seal - 1.
            event = LedgerEvent.objects.get(stream=stream, seq=seal)
            position, problem = seal - 1, "hash does not match the event's contents"
        return Verification(ok=False, count=count + position, broken=event, problem=problem)
    return Verification(ok=True, count=count)


def total_events() -> int:
    return LedgerEvent.objects.count()
