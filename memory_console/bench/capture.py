"""`capture` in the bench: what capture costs the server, with a model that costs nothing.

The model is the scripted OpenAI-compatible one (memory_console/loadgen/chat_model.py: it
answers at once, one memory per user message), so the figures are the server's own work:
reading a slice of messages, composing the request, and writing each item through
remember (its embedding, its near-duplicate check, its ledger event) in one transaction.

1. Messages per second: a backlog of threads (8 messages each, half the person's) queued
   and drained by one `capture_worker` beside the idle app server.
2. Beside a busy worker: a second backlog, sized from (1) to outlast the measurement, is
   drained while `turn` and `remember` are measured over HTTP as in the bench's own ops;
   `busy_throughout` says whether the queue still held jobs when the last request was
   answered. Compare their p50 with the idle `turn` and `remember` of the same run.
"""

import subprocess
import sys
import time
import uuid

from memory_console.loadgen.chat_model import ChatModel
from memory_console.loadgen.server import PROJECT, wait_until

THREADS = 60  # threads of the first backlog (fewer when the bench asks few requests)
MESSAGES = 8  # per thread, alternating user and assistant
DRAIN_SECONDS = 900


def _backlog(rng, actors, threads: int) -> tuple[list[str], int]:
    """`threads` new threads of sampled actors, each with MESSAGES messages, queued."""
    from memory_console.bench import words
    from memory_core.capture import queue
    from memory_core.models import Actor, Message, Thread

    refs, total = [], 0
    chosen = Actor.objects.filter(id__in=[rng.choice(actors)["id"] for _ in range(threads)])
    by_id = {a.id: a for a in chosen}
    for _ in range(threads):
        actor = by_id[rng.choice(list(by_id))]
        thread = Thread.objects.create(actor=actor, ref=f"bench-capture-{uuid.uuid4().hex}")
        Message.objects.bulk_create(
            [
                Message(
                    thread=thread,
                    role="user" if i % 2 == 0 else "assistant",
                    text=words.fact(rng),
                )
                for i in range(MESSAGES)
            ]
        )
        queue.enqueue(actor, thread.ref)
        refs.append(thread.ref)
        total += MESSAGES
    return refs, total


def _queue_empty() -> bool:
    from memory_core.models import CaptureJob

    return not CaptureJob.objects.exists()


def _worker(env: dict, log) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "manage.py", "capture_worker", "--poll", "0.05"],
        cwd=PROJECT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
    )


def _written(refs: list[str]) -> tuple[int, int]:
    """(messages read, memories written) by the completed extractions of these threads."""
    from memory_core.models import Extraction

    done = Extraction.objects.filter(thread_ref__in=refs, outcome="done")
    return sum(e.messages for e in done), sum(len(e.written) for e in done)


def measure(app, secret: str, actors, args, rng, logdir) -> dict:
    from memory_console.bench import load, words
    from memory_console.bench.report import summary
    from memory_console.bench.run import turn_request

    api = {"Authorization": f"Bearer {secret}"}
    total = args.warmup + args.requests
    with ChatModel() as model, open(logdir / "capture-worker.log", "wb") as log:
        env = {**app.env, **model.env(MEMORY_EXTRACTOR_TIMEOUT=30, MEMORY_EXTRACTOR_COOLDOWN=0)}
        # 1. The backlog drained by an otherwise idle server.
        refs, messages = _backlog(rng, actors, max(10, min(THREADS, args.requests)))
        worker = _worker(env, log)
        try:
            started = time.perf_counter()
            wait_until(_queue_empty, timeout=DRAIN_SECONDS, interval=0.05, what="the drain")
            seconds = time.perf_counter() - started
            read, memories = _written(refs)
            rate = read / seconds if seconds else 0.0
            # 2. turn and remember while the worker drains a second backlog that, at that
            # rate, outlasts both measurements (their rps estimated at 50/s, generously low).
            expected = 2 * total / 50
            busy_threads = max(len(refs), int(rate * expected * 1.5 / MESSAGES) + 1)
            busy_refs, _ = _backlog(rng, actors, busy_threads)
            plans = {
                "turn": lambda: turn_request(rng, actors),
                "remember": lambda: (
                    "POST",
                    "/api/v1/memories",
                    {
                        "actor": rng.choice(actors)["ref"],
                        "key": f"bench-note-{rng.randrange(20)}",
                        "fact": words.fact(rng),
                    },
                    (200, 201),
                ),
            }
            beside = {}
            for name, plan in plans.items():
                requests = [plan() for _ in range(total)]
                latencies, wall = load.drive(
                    app.port,
                    api,
                    lambda i, r=requests: r[i],
                    args.clients,
                    args.warmup,
                    args.requests,
                )
                beside[name] = summary(latencies, wall)
            busy = not _queue_empty()
            wait_until(_queue_empty, timeout=DRAIN_SECONDS, interval=0.1, what="the drain")
        finally:
            worker.terminate()
            worker.wait(timeout=60)
    busy_read, busy_memories = _written(busy_refs)
    return {
        "threads": len(refs),
        "messages": read,
        "memories": memories,
        "seconds": round(seconds, 2),
        "messages_per_s": round(rate, 1),
        "model_requests": len(model.requests),
        "turn_busy": beside["turn"],
        "remember_busy": beside["remember"],
        "busy_threads": busy_threads,
        "busy_messages": busy_read,
        "busy_memories": busy_memories,
        "busy_throughout": busy,
    }


def line(figure: dict, ops: dict) -> str:
    def compared(name: str) -> str:
        busy = figure[f"{name}_busy"]["p50_ms"]
        idle = ops.get(name, {}).get("p50_ms")
        return f"{name} p50 {busy:.2f} ms" + (f" (idle {idle:.2f} ms)" if idle else "")

    note = "" if figure["busy_throughout"] else " (the queue emptied before the last request)"
    return (
        f"capture: {figure['messages_per_s']:.0f} messages/s extracted by one worker "
        f"({figure['messages']} messages, {figure['memories']} memories written, scripted "
        f"model); beside a busy worker: {compared('turn')}, {compared('remember')}{note}"
    )
