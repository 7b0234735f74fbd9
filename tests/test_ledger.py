"""The ledger's hash chain: per stream, verifiable, tamper-evident, never forked."""

import threading

import pgtrigger
import pytest
from django.db import close_old_connections, connection

from memory_core import writes
from memory_core.ledger import ledger
from memory_core.models import LedgerEvent, Memory
from tests.roles import as_owner


def test_each_stream_is_its_own_chain(org, operator):
    writes.publish(org.acme, "a", "one", principal=operator)
    writes.publish(org.ops, "b", "two", principal=operator)
    writes.publish(org.globex, "c", "three", principal=operator)
    writes.publish(org.root, "d", "four", principal=operator)
    by_stream = {}
    for event in LedgerEvent.objects.order_by("id"):
        by_stream.setdefault(event.stream, []).append(event)
    assert {"tenant:acme", "tenant:globex", "global"} <= set(by_stream)
    for events in by_stream.values():
        assert events[0].prev_hash == ledger.GENESIS and events[0].seq == 1
        for before, after in zip(events, events[1:], strict=False):
            assert after.prev_hash == before.hash and after.seq == before.seq + 1
    # team:acme/ops sits under tenant:acme, so its events join that tenant's stream.
    assert LedgerEvent.objects.get(kind="memory.published", scope="team:acme/ops").stream == (
        "tenant:acme"
    )


def test_verify_reports_ok_with_the_count(org, operator):
    writes.publish(org.acme, "a", "one", principal=operator)
    result = ledger.verify()
    assert result.ok and result.count == LedgerEvent.objects.count()


def test_verify_names_the_first_tampered_event(org, operator):
    writes.publish(org.acme, "a", "one", principal=operator)
    writes.publish(org.acme, "b", "second", principal=operator)
    target = LedgerEvent.objects.get(kind="memory.published", payload__chars=3)
    # Only the owner can even try (the server's role may not UPDATE the ledger at all).
    with as_owner(), pgtrigger.ignore("memory_core.LedgerEvent:ledger_append_only"):
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE memory_core_ledgerevent SET principal = 'mallory' WHERE id = %s",
                [target.id],
            )
    result = ledger.verify()
    assert not result.ok and result.broken.id == target.id
    assert "hash" in result.problem


def test_hash_covers_a_canonical_serialisation():
    class E:
        stream, seq, kind, scope, principal, actor_ref = "global", 1, "k", "global", "p", None
        payload = {"b": 1, "a": [1, 2]}
        prev_hash = ledger.GENESIS

    import datetime

    E.created_at = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    first = ledger.event_hash(E)
    E.payload = {"a": [1, 2], "b": 1}
    assert ledger.event_hash(E) == first
    E.payload = {"a": [2, 1], "b": 1}
    assert ledger.event_hash(E) != first


def _in_threads(count, work):
    barrier = threading.Barrier(count)
    errors = []

    def run(i):
        try:
            barrier.wait(timeout=30)
            work(i)
        except Exception as error:  # collected and asserted below
            errors.append(error)
        finally:
            close_old_connections()
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return errors


@pytest.mark.django_db(transaction=True)
def test_twenty_simultaneous_remembers_leave_one_live_row_and_an_unforked_chain(org):
    errors = _in_threads(
        20,
        lambda i: writes.remember(
            org.u1, "fiscal-year", f"guess number {i}", principal=org.acme_agent
        ),
    )
    assert errors == []
    rows = Memory.objects.filter(scope=org.u1.scope, key="fiscal-year")
    assert rows.count() == 20
    assert rows.filter(retired_at__isnull=True).count() == 1
    # One lineage, each version superseding exactly the one before it.
    assert rows.values("lineage").distinct().count() == 1
    live = rows.get(retired_at__isnull=True)
    length, node = 1, live
    while node.supersedes_id:
        node, length = node.supersedes, length + 1
    assert length == 20
    seqs = list(
        LedgerEvent.objects.filter(stream="tenant:acme")
        .order_by("seq")
        .values_list("seq", flat=True)
    )
    assert seqs == list(range(1, len(seqs) + 1))
    assert ledger.verify().ok


SEALS = [
    ("tenant:acme", 1, "memory.published", "team:acme/ops", "user:ann", None, {}),
    ("global", 7, "actor.registered", "actor:acme/u1", "key:mc_ab", "u1", {"scopes": ["a", "b"]}),
    # Keys of one length sort by bytes, shorter keys first (jsonb's order, not Python's).
    ("tenant:acme", 2, "k", "s", "p", "a", {"memories": ["x"], "pinned": True, "chars": 3}),
    # Escapes and text outside ASCII: quotes, backslash, control characters, emoji, RTL.
    ("s", 3, 'k"\\', "s\n\t\x01", "Zoë 名前 🙂", "ref\u202e", {"target": 'a"b\\c\x1f'}),
    ("s", 4, "k", "s", "p", None, {"versions": [1, 2, [3, {"count": 0}]], "user": None}),
]


@pytest.mark.django_db
@pytest.mark.parametrize("stream, seq, kind, scope, principal, actor, payload", SEALS)
def test_python_canonical_form_is_the_sql_seal(stream, seq, kind, scope, principal, actor, payload):
    """ledger.canonical() lets anyone check an export without the database: it must hash
    exactly what memory_core_ledger_hash (which seals every event) hashes."""
    import datetime

    from psycopg.types.json import Jsonb

    moment = datetime.datetime(2026, 3, 4, 5, 6, 7, 89, tzinfo=datetime.UTC)

    class E:
        pass

    E.stream, E.seq, E.kind, E.scope, E.principal, E.actor_ref = (
        stream,
        seq,
        kind,
        scope,
        principal,
        actor,
    )
    E.payload, E.created_at, E.prev_hash = payload, moment, ledger.GENESIS
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT memory_core_ledger_hash(%s, %s, %s, %s, %s, %s, %s, %s, %s)",
            [stream, seq, kind, scope, principal, actor, Jsonb(payload), moment, ledger.GENESIS],
        )
        assert cursor.fetchone()[0] == ledger.event_hash(E)


def test_appended_events_are_sealed_by_the_database_as_python_computes(org, operator):
    writes.publish(org.acme, "a", "one", principal=operator)
    for event in LedgerEvent.objects.all():
        assert event.hash == ledger.event_hash(event)


def test_floats_are_refused_in_payloads(org, operator):
    before = LedgerEvent.objects.count()
    with pytest.raises(ValueError, match="floats"):
        ledger.append("scope.created", org.acme, operator, {"count": 1.5})
    assert LedgerEvent.objects.count() == before


def _insert_raw(stream, seq, prev, payload, sealed=None, principal="user:old"):
    """An event written behind the ledger's back, sealed by `sealed` or, by default, with
    the hash ledger.event_hash computes in Python (the database's own rendering)."""
    import datetime
    import json
    from types import SimpleNamespace

    event = SimpleNamespace(
        stream=stream,
        seq=seq,
        kind="memory.published",
        scope=stream,
        principal=principal,
        actor_ref=None,
        payload=payload,
        created_at=datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC),
        prev_hash=prev,
    )
    digest = sealed or ledger.event_hash(event)
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO memory_core_ledgerevent (stream, seq, kind, scope, principal,"
            " actor_ref, payload, created_at, prev_hash, hash)"
            " VALUES (%s, %s, %s, %s, %s, NULL, %s::jsonb, %s, %s, %s)",
            [
                stream,
                seq,
                event.kind,
                stream,
                principal,
                json.dumps(payload),
                event.created_at,
                prev,
                digest,
            ],
        )
    return digest


def test_a_stream_sealed_as_python_computes_the_hash_verifies(db):
    first = _insert_raw("tenant:outside", 1, ledger.GENESIS, {"memory": "mem_1", "chars": 3})
    _insert_raw("tenant:outside", 2, first, {"memory": "mem_2"})
    result = ledger.verify()
    assert result.ok and result.count == LedgerEvent.objects.count()


def test_an_event_whose_seal_does_not_match_its_contents_is_caught(db):
    first = _insert_raw("tenant:outside", 1, ledger.GENESIS, {"memory": "mem_1"})
    _insert_raw("tenant:outside", 2, first, {"memory": "mem_2"}, sealed="f" * 64)
    result = ledger.verify(streams=["tenant:outside"])
    assert not result.ok and result.broken.seq == 2 and result.count == 1
    assert "hash" in result.problem


def test_verify_names_a_broken_link_and_counts_the_events_before_it(org, operator):
    writes.publish(org.acme, "a", "one", principal=operator)
    writes.publish(org.acme, "b", "two", principal=operator)
    acme = list(LedgerEvent.objects.filter(stream="tenant:acme").order_by("seq"))
    _insert_raw("tenant:acme", acme[-1].seq + 1, "0" * 63 + "1", {"memory": "mem_x"})
    result = ledger.verify(streams=["tenant:acme"])
    assert not result.ok and result.broken.seq == acme[-1].seq + 1
    assert result.problem == "prev_hash does not match the previous event's hash"
    assert result.count == len(acme)
