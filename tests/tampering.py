"""Rewriting the ledger as someone with the owner's (or a superuser's) password could:
triggers lifted, rows edited or deleted, and every later hash recomputed with the project's
own hash function (memory_core.ledger.ledger.event_hash), so the chain alone still verifies."""

import json
from types import SimpleNamespace

import pgtrigger
from django.db import connection, transaction

from memory_core.ledger import ledger
from memory_core.models import LedgerEvent
from tests.roles import as_owner

GUARDS = ("memory_core.LedgerEvent:ledger_append_only",)

_FIELDS = ("stream", "seq", "kind", "scope", "principal", "actor_ref", "payload", "created_at")


def _events(stream):
    return [
        SimpleNamespace(**{f: getattr(e, f) for f in (*_FIELDS, "id", "prev_hash", "hash")})
        for e in LedgerEvent.objects.filter(stream=stream).order_by("seq")
    ]


def _rewrite(stream, events) -> None:
    """Replace the stream with `events` (renumbered from 1, re-chained, re-hashed)."""
    prev = ledger.GENESIS
    for seq, event in enumerate(events, start=1):
        event.seq, event.prev_hash = seq, prev
        event.hash = prev = ledger.event_hash(event)
    with transaction.atomic(), as_owner(), pgtrigger.ignore(*GUARDS), connection.cursor() as cursor:
        cursor.execute("DELETE FROM memory_core_ledgerevent WHERE stream = %s", [stream])
        for event in events:
            cursor.execute(
                "INSERT INTO memory_core_ledgerevent (stream, seq, kind, scope, principal,"
                " actor_ref, payload, created_at, prev_hash, hash)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s::jsonb, %s, %s, %s)",
                [
                    event.stream,
                    event.seq,
                    event.kind,
                    event.scope,
                    event.principal,
                    event.actor_ref,
                    json.dumps(event.payload),
                    event.created_at,
                    event.prev_hash,
                    event.hash,
                ],
            )


def edit_and_rehash(stream: str, seq: int, **changes) -> None:
    """Edit event `seq` of `stream` and recompute every later hash."""
    events = _events(stream)
    for name, value in changes.items():
        setattr(events[seq - 1], name, value)
    _rewrite(stream, events)


def delete_and_rehash(stream: str, seq: int) -> None:
    """Remove event `seq`, renumber the later ones and recompute their hashes."""
    events = _events(stream)
    del events[seq - 1]
    _rewrite(stream, events)


def truncate_and_rebuild(stream: str, keep: int) -> None:
    """Throw the stream away and write a fresh chain of its first `keep` events."""
    _rewrite(stream, _events(stream)[:keep])


def edit_in_place(stream: str, seq: int, **changes) -> None:
    """Edit one event without touching any hash (what plain verify_ledger catches)."""
    sets = ", ".join(f"{name} = %s" for name in changes)
    with transaction.atomic(), as_owner(), pgtrigger.ignore(*GUARDS), connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE memory_core_ledgerevent SET {sets} WHERE stream = %s AND seq = %s",
            [*changes.values(), stream, seq],
        )
