"""Capture's automatic queue (MEMORY_EXTRACT_EVERY) and its worker (`capture_worker`):
queued inside the message's transaction, extracted outside any request, claimed with
FOR UPDATE SKIP LOCKED and a lease, retried after a failure, dropped for an erased actor."""

import io
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import transaction
from django.utils import timezone

from memory_core import erasure, transcripts
from memory_core.capture import queue
from memory_core.changes import erased_as_gone
from memory_core.errors import Gone
from memory_core.models import AccessLog, CaptureJob, Extraction, LedgerEvent, Memory
from tests.chat_server import ChatServer
from tests.helpers import bearer, use_server

THREAD = "t-q"


@pytest.fixture(autouse=True)
def _fresh_extractor(fresh_extractor):
    pass


@pytest.fixture
def model(settings):
    with ChatServer(script=[{"key": "home-city", "fact": "lives in Lisbon"}]) as server:
        use_server(settings, server, MEMORY_EXTRACT_EVERY=3)
        yield server


def post(client, org, text, thread=THREAD):
    return client.post(
        f"/api/v1/threads/{thread}/messages",
        {"actor": "u1", "role": "user", "text": text},
        content_type="application/json",
        headers=bearer(org.acme_secret),
    )


def test_every_n_messages_queue_an_extraction_that_the_request_never_runs(org, client, model):
    assert post(client, org, "one").status_code == 201
    assert post(client, org, "two").status_code == 201
    assert not CaptureJob.objects.exists()
    assert post(client, org, "three").status_code == 201
    job = CaptureJob.objects.get()
    assert (job.actor, job.thread_ref, job.reason, job.attempts) == (org.u1, THREAD, "every", 0)
    # The requests only queued: the model was not asked and nothing was written.
    assert not model.requests and not Memory.objects.exists()
    # A fourth message finds the job queued and adds none.
    post(client, org, "four")
    assert CaptureJob.objects.count() == 1
    assert queue.drain() == {"done": 1}
    assert not CaptureJob.objects.exists()
    record = Extraction.objects.get()
    assert (record.trigger, record.principal, record.messages) == ("worker", queue.WORKER, 4)
    memory = Memory.objects.get(key="home-city")
    assert (memory.author, memory.scope.token, memory.origin_thread) == (
        "agent",
        "actor:acme/u1",
        THREAD,
    )
    assert LedgerEvent.objects.get(kind="capture.extracted").principal == queue.WORKER


def test_the_count_starts_again_after_the_watermark(org, client, model):
    for text in ("a", "b", "c"):
        post(client, org, text)
    queue.drain()
    post(client, org, "d")
    post(client, org, "e")
    assert not CaptureJob.objects.exists()
    post(client, org, "f")
    assert CaptureJob.objects.count() == 1


@pytest.mark.parametrize("off", [{"MEMORY_EXTRACT_EVERY": 0}, {"MEMORY_EXTRACTOR": "none"}])
def test_nothing_is_queued_unless_capture_is_automatic(org, client, model, settings, off):
    for name, value in off.items():
        setattr(settings, name, value)
    for n in range(5):
        post(client, org, f"message {n}")
    assert not CaptureJob.objects.exists()


def test_a_failed_job_waits_out_a_backoff_and_keeps_its_messages(org, client, model):
    for text in ("a", "b", "c"):
        post(client, org, text)
    model.mode = "down"
    assert queue.drain() == {"failed": 1}
    job = CaptureJob.objects.get()
    assert (job.attempts, job.last_error, job.locked_by) == (1, "unreachable", "")
    assert job.not_before > timezone.now() + timedelta(seconds=3)
    assert queue.drain() == {}  # not due yet
    assert not Memory.objects.exists()
    assert Extraction.objects.get().outcome == "failed"
    # Due again, and the model answering: the same messages are read.
    model.mode = "ok"
    CaptureJob.objects.update(not_before=timezone.now())
    assert queue.drain() == {"done": 1}
    assert Extraction.objects.get(outcome="done").messages == 3
    assert queue.backoff(1) == timedelta(seconds=5) and queue.backoff(30) == queue.MAX_BACKOFF


def test_a_claimed_job_is_not_claimed_again_until_its_lease_runs_out(org, model):
    queue.enqueue(org.u1, THREAD)
    first = queue.claim("worker-a")
    assert first is not None and first.locked_by == "worker-a"
    assert queue.claim("worker-b") is None
    # worker-a died: its lease runs out, and worker-b claims the job.
    CaptureJob.objects.update(locked_until=timezone.now() - timedelta(seconds=1))
    second = queue.claim("worker-b")
    assert second is not None and second.pk == first.pk and second.locked_by == "worker-b"


def test_a_job_finished_by_a_worker_whose_lease_ran_out_leaves_the_new_claim_alone(org, model):
    transcripts.record_message(org.u1, THREAD, "user", "hello", principal=org.acme_agent)
    queue.enqueue(org.u1, THREAD)
    stale = queue.claim("worker-a")
    CaptureJob.objects.update(locked_until=timezone.now() - timedelta(seconds=1))
    queue.claim("worker-b")
    assert queue.run_job(stale, "worker-a") == "done"
    assert CaptureJob.objects.get().locked_by == "worker-b"  # not deleted under worker-b
    fresh = CaptureJob.objects.get()
    assert queue.run_job(fresh, "worker-b") == "done"  # finds the range extracted
    assert Extraction.objects.filter(outcome="done").count() == 1
    assert not CaptureJob.objects.exists()


def test_a_slice_read_with_more_waiting_is_queued_again(org, model, monkeypatch):
    from memory_core.rules import capture

    monkeypatch.setattr(capture, "SLICE_MESSAGES", 2)
    for n in range(5):
        transcripts.record_message(org.u1, THREAD, "user", f"m{n}", principal=org.acme_agent)
    queue.enqueue(org.u1, THREAD)
    assert queue.drain() == {"more": 2, "done": 1}
    assert [r.messages for r in Extraction.objects.order_by("id")] == [2, 2, 1]


def test_a_job_for_an_erased_actor_is_dropped_and_writes_nothing(org, model, users):
    transcripts.record_message(org.u1, THREAD, "user", "I live in Porto", principal=org.acme_agent)
    queue.enqueue(org.u1, THREAD)
    erasure.erase_actor(org.u1, principal=users.p_owner)
    assert queue.drain() == {"dropped": 1}
    assert not CaptureJob.objects.exists()
    assert not model.requests
    assert not Memory.objects.filter(scope__token="actor:acme/u1").exists()
    assert not Extraction.objects.exists()
    assert AccessLog.objects.filter(action="extract", outcome=410).exists()


def test_a_job_is_never_queued_for_an_erased_actor(org, model, users):
    erasure.erase_actor(org.u1, principal=users.p_owner)
    with pytest.raises(Gone), erased_as_gone(org.u1.ref), transaction.atomic():
        queue.enqueue(org.u1, THREAD)


def test_capture_worker_once_drains_the_queue(org, model):
    transcripts.record_message(org.u1, THREAD, "user", "I live in Lisbon", principal=org.acme_agent)
    queue.enqueue(org.u1, THREAD)
    out = io.StringIO()
    call_command("capture_worker", "--once", stdout=out)
    assert "stopped: 1 done" in out.getvalue()
    assert Memory.objects.filter(key="home-city").exists()


def test_capture_worker_refuses_to_start_with_extraction_off(db, settings):
    settings.MEMORY_EXTRACTOR = "none"
    with pytest.raises(CommandError, match="extraction is off"):
        call_command("capture_worker", "--once", stdout=io.StringIO())


def test_the_worker_of_serve_exits_when_serve_is_gone(db, model):
    """`serve` starts `capture_worker --parent <its pid>`: when serve is gone (here: a parent
    that is not this process's), the worker stops at its next look, whatever is queued."""
    out = io.StringIO()
    call_command("capture_worker", "--parent", "1", "--poll", "0.1", stdout=out)
    assert "stopped: no jobs" in out.getvalue()
