"""The ledger's hash chain: per stream, verifiable, tamper-evident, never forked."""

import threading

import pgtrigger
import pytest
from django.db import close_old_connections, connection

from memory_core import ledger, writes
from memory_core.models import LedgerEvent, Memory


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
    # team:ops sits under tenant:acme, so its events join that tenant's stream.
    assert LedgerEvent.objects.get(kind="memory.published", scope="team:ops").stream == (
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
    with pgtrigger.ignore("memory_core.LedgerEvent:ledger_append_only"):
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
