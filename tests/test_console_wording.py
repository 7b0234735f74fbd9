"""Counts in words: "1 version", "2 versions" wherever the console says how many (the bulk
report, the chain check's verdicts)."""

import pytest

from memory_console.console.ledger.verification import verification_message
from memory_core import bulk, writes
from memory_core.models import Memory


@pytest.mark.parametrize("count, words", [(1, "1 version"), (2, "2 versions")])
def test_a_bulk_forget_counts_its_versions_in_words(count, words):
    report = bulk.BulkReport("bulk_x", "forget")
    said = bulk.describe(report, bulk.Outcome("mem_x", count=count))
    assert said == f"forgotten ({words} erased)"


def test_a_bulk_forget_of_a_memory_with_one_version_reads_singular(users, org):
    memory = writes.publish(org.acme, "k", "one", principal=users.p_owner)
    report = bulk.run("forget", [memory.uid], principal=users.p_owner, lookup=lambda uid: memory)
    assert [bulk.describe(report, o) for o in report.outcomes] == ["forgotten (1 version erased)"]
    assert not Memory.objects.filter(uid=memory.uid).exists()


@pytest.mark.parametrize("count, words", [(0, "0 events"), (1, "1 event"), (7, "7 events")])
def test_the_chain_checks_verdict_counts_in_words(count, words):
    summary = {"ok": True, "count": count, "broken": None, "checkpoint": None}
    assert verification_message(summary) == f"ok: {words}"


def test_a_checkpoint_verdict_counts_heads_and_streams_in_words():
    checkpoint = {
        "taken_at": "2026-01-01T00:00:00Z",
        "key_source": "uploaded",
        "key_id": "k" * 64,
        "heads": 1,
        "skipped": 1,
        "stream": None,
        "seq": None,
    }
    summary = {"ok": True, "count": 1, "broken": None, "checkpoint": checkpoint}
    said = verification_message(summary)
    assert said.startswith("ok: 1 event; 1 checkpointed head holds (")
    assert said.endswith("; 1 stream outside your grants not checked")
    assert "(s)" not in said
