"""Messages and pruning: a pruned origin dangles, memories stay."""

from memory_core import transcripts, writes
from memory_core.models import LedgerEvent, Memory, Message, Thread
from memory_core.recall import readback


def test_pruning_keeps_the_newest_messages_and_drops_empty_threads(org, operator):
    for i in range(5):
        transcripts.record_message(org.u1, "thr_1", "user", f"m{i}", principal=org.acme_agent)
    transcripts.record_message(org.u2, "thr_2", "user", "only", principal=org.acme_agent)
    deleted, threads = transcripts.prune_history(2, principal=operator)
    assert (deleted, threads) == (3, 0)
    assert list(Message.objects.filter(thread__ref="thr_1").values_list("text", flat=True)) == [
        "m3",
        "m4",
    ]
    deleted, threads = transcripts.prune_history(0, principal=operator)
    assert (deleted, threads) == (3, 2) and not Thread.objects.exists()
    assert LedgerEvent.objects.filter(kind="history.pruned").count() == 2


def test_a_memory_outlives_its_conversation_and_its_origin_stops_resolving(org, operator):
    transcripts.record_message(
        org.u1, "thr_1", "user", "we use the calendar year", principal=org.acme_agent, run_id="r1"
    )
    writes.remember(
        org.u1,
        "fiscal-year",
        "calendar year",
        principal=org.acme_agent,
        run_id="r1",
        tool_call_id="c1",
        thread_id="thr_1",
    )
    items, _ = readback.read_back(org.u1, principal=org.acme_agent)
    assert items[0]["origin"]["resolves"] is True
    transcripts.prune_history(0, principal=operator)
    items, _ = readback.read_back(org.u1, principal=org.acme_agent)
    assert items[0]["origin"] == {
        "actor": "acme/u1",
        "thread_id": "thr_1",
        "run_id": "r1",
        "tool_call_id": "c1",
        "resolves": False,
    }
    assert Memory.objects.count() == 1
