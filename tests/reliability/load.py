"""The mixed agent workload (turns 80 %, remembers 15 %, forgets 5 %) and its bookkeeping.

Each client thread owns its keys (`c03-k2`), written for an actor it shares with one other
client, so it knows exactly what the server must hold for them: the id of the last
acknowledged remember, or nothing after an acknowledged forget. A remember or forget that
got no clear answer (a 503 while the database was down, a reset connection) makes that key
*uncertain*: the client stops using it, and the checks afterwards only demand what is still
certain (see `KeyState`).
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

from memory_console.loadgen.percentiles import percentile

from .harness import Api, Response

MIX = (("turn", 0.80), ("remember", 0.15), ("forget", 0.05))


@dataclass
class Sample:
    kind: str
    started: float  # time.monotonic()
    finished: float
    status: int | None
    body: bytes
    content_type: str
    error: str


@dataclass
class KeyState:
    actor: str
    key: str
    live: str | None = None  # the id the server must show for this key, None = nothing
    lineage: list[str] = field(default_factory=list)  # acknowledged ids since the last forget
    remembered: list[str] = field(default_factory=list)  # every acknowledged remember
    forgotten: set[str] = field(default_factory=set)  # ids erased by an acknowledged forget
    # None while certain; else "remember" or "forget": the unacknowledged write that may or
    # may not have happened. Ids acknowledged before an uncertain *remember* must still
    # exist (live or superseded); before an uncertain *forget* they may be gone.
    uncertain: str | None = None
    forgets: int = 0  # acknowledged forgets


@dataclass
class ClientResult:
    samples: list[Sample] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    keys: list[KeyState] = field(default_factory=list)


class LoadClient(threading.Thread):
    """One agent host: a loop of turns, remembers and forgets until told to stop."""

    def __init__(
        self,
        api: Api,
        index: int,
        actor: str,
        *,
        keys: int,
        stop: threading.Event,
        deadline: float,
        max_requests: int,
        seed: int,
        tolerate=None,
        pause: threading.Event | None = None,
    ):
        super().__init__(name=f"load-{index}", daemon=True)
        self.api, self.index, self.actor = api, index, actor
        self.stop, self.deadline, self.max_requests = stop, deadline, max_requests
        self.rng = random.Random(seed)
        # tolerate(sample) -> True for answers the fault test expects (503s while it is down).
        self.tolerate = tolerate or (lambda sample: False)
        self.result = ClientResult(
            keys=[KeyState(actor, f"c{index:02d}-k{j}") for j in range(keys)]
        )
        self.runs = 0
        # While `pause` is set the client sends nothing (the fault tests quiet the load).
        self.pause = pause or threading.Event()
        self.busy = False  # a request is in flight
        self.last_answer = 0.0  # time.monotonic() of the last answer (or failure)

    # -- the loop -------------------------------------------------------------------------

    def run(self):
        try:
            for _ in range(self.max_requests):
                while self.pause.is_set() and not self.stop.is_set():
                    time.sleep(0.05)
                if self.stop.is_set() or time.monotonic() >= self.deadline:
                    return
                self.busy = True
                try:
                    self.step()
                finally:
                    self.busy = False
        except Exception as error:  # noqa: BLE001 - a crashed client is a failed test
            self.result.failures.append(f"client {self.index} crashed: {error!r}")

    def step(self):
        roll = self.rng.random()
        certain = [k for k in self.result.keys if k.uncertain is None]
        if roll < MIX[0][1] or not certain:
            return self.turn()
        if roll < MIX[0][1] + MIX[1][1]:
            return self.remember(self.rng.choice(certain))
        live = [k for k in certain if k.live is not None]
        if not live:
            return self.turn()
        return self.forget(self.rng.choice(live))

    def _sample(self, kind: str, started: float, resp: Response) -> Sample:
        sample = Sample(
            kind,
            started,
            time.monotonic(),
            resp.status,
            resp.body[:2000],
            resp.content_type,
            resp.error,
        )
        self.result.samples.append(sample)
        self.last_answer = sample.finished
        return sample

    def _unexpected(self, sample: Sample, what: str) -> None:
        if not self.tolerate(sample):
            self.result.failures.append(
                f"{what}: {sample.status or sample.error} {sample.body[:300]!r}"
            )

    def turn(self):
        self.runs += 1
        started = time.monotonic()
        query = self.rng.choice([None, None, "budget", "calendar year"])
        resp = self.api.turn(self.actor, f"c{self.index}-run-{self.runs}", query)
        sample = self._sample("turn", started, resp)
        if resp.status != 200:
            return self._unexpected(sample, f"turn for {self.actor}")
        entries = {e["key"]: e["id"] for e in resp.json()["entries"]}
        # Read your writes: every certain key of this client shows exactly what it holds.
        for state in self.result.keys:
            if state.uncertain is not None:
                continue
            if entries.get(state.key) != state.live:
                self.result.failures.append(
                    f"turn for {self.actor} shows {state.key}={entries.get(state.key)}, "
                    f"expected {state.live}"
                )

    def remember(self, state: KeyState):
        started = time.monotonic()
        fact = f"fact {self.rng.randrange(10**9)} for {state.key} of the budget"
        resp = self.api.remember(state.actor, state.key, fact)
        sample = self._sample("remember", started, resp)
        if resp.status != 201:
            state.uncertain = "remember"
            return self._unexpected(sample, f"remember {state.key}")
        body = resp.json()
        if body["supersedes"] != state.live or body["text"] != fact:
            self.result.failures.append(
                f"remember {state.key} superseded {body['supersedes']}, expected {state.live}"
            )
        state.live = body["id"]
        state.lineage.append(body["id"])
        state.remembered.append(body["id"])

    def forget(self, state: KeyState):
        started = time.monotonic()
        resp = self.api.forget(state.actor, state.live)
        sample = self._sample("forget", started, resp)
        if resp.status != 204:
            state.uncertain = "forget"
            return self._unexpected(sample, f"forget {state.key}")
        state.forgotten.update(state.lineage)
        state.forgets += 1
        state.lineage = []
        state.live = None


def run_clients(clients: list[LoadClient], timeout: float) -> None:
    for client in clients:
        client.start()
    for client in clients:
        client.join(timeout)
        assert not client.is_alive(), f"{client.name} did not finish within {timeout}s"


def summarise(samples: list[Sample]) -> dict:
    """Counts and latencies (nearest-rank percentiles, as the bench's) of the samples."""
    elapsed = [s.finished - s.started for s in samples]
    return {
        "requests": len(samples),
        "by_kind": dict(Counter(s.kind for s in samples)),
        "statuses": {str(k): v for k, v in Counter(s.status for s in samples).items()},
        "latency_ms": {
            "p50": round(1000 * percentile(elapsed, 50), 1),
            "p95": round(1000 * percentile(elapsed, 95), 1),
            "p99": round(1000 * percentile(elapsed, 99), 1),
            "max": round(1000 * max(elapsed, default=0.0), 1),
        },
    }


def verify_keys(api: Api, conn, keys: list[KeyState], *, http_checks: int = 400) -> dict:
    """What the server holds against what the clients were told.

    Returns {"failures": [...], "writes_verified": n, "probes": n}. Certain keys are checked
    exactly, over HTTP (GET /memories/{id}, the read-back) and in SQL; uncertain keys only
    for what stays true whatever became of their last write. Every acknowledged remember
    must also have its access-log row.
    """
    failures: list[str] = []
    probes = 0
    remembered = [uid for state in keys for uid in state.remembered]
    forgotten = [uid for state in keys for uid in state.forgotten]
    rows = conn.execute(
        "SELECT uid, retired_at IS NULL FROM memory_core_memory WHERE uid = ANY(%s)",
        [remembered],
    ).fetchall()
    exists = {uid: live for uid, live in rows}
    for uid in forgotten:
        if uid in exists:
            failures.append(f"{uid} was forgotten (204) but is still stored")
    for state in keys:
        must_exist = [u for u in state.remembered if u not in state.forgotten]
        if state.uncertain == "forget":
            must_exist = [u for u in must_exist if u not in state.lineage]
        for uid in must_exist:
            if uid not in exists:
                failures.append(f"{state.key}: acknowledged remember {uid} is missing")
        if state.uncertain is None:
            live_now = {u for u in must_exist if exists.get(u)}
            expected = {state.live} if state.live else set()
            if live_now != expected:
                failures.append(f"{state.key}: live {sorted(live_now)}, expected {state.live}")
    logged = {
        uid
        for (uid,) in conn.execute(
            """
            SELECT DISTINCT unnest(memory_ids) FROM memory_core_accesslog
            WHERE action = 'remember' AND outcome = 201 AND memory_ids && %s::varchar[]
            """,
            [remembered],
        ).fetchall()
    }
    for uid in set(remembered) - logged:
        failures.append(f"acknowledged remember {uid} has no access-log row")

    # Over HTTP, as an agent sees it: the read-back of each actor, then single memories.
    certain = [s for s in keys if s.uncertain is None]
    by_actor: dict[str, list[KeyState]] = {}
    for state in certain:
        by_actor.setdefault(state.actor, []).append(state)
    for actor, states in sorted(by_actor.items()):
        resp = api.read_back(actor)
        probes += 1
        if resp.status != 200:
            failures.append(f"read-back of {actor}: {resp.status or resp.error}")
            continue
        shown = {item["key"]: item["id"] for item in resp.json()["items"]}
        for state in states:
            if shown.get(state.key) != state.live:
                failures.append(
                    f"read-back of {actor} shows {state.key}={shown.get(state.key)}, "
                    f"expected {state.live}"
                )
    budget = http_checks
    for state in certain:
        if state.live and budget > 0:
            budget -= 1
            probes += 1
            resp = api.memory(state.actor, state.live)
            if resp.status != 200 or resp.json()["id"] != state.live:
                failures.append(f"GET {state.live} ({state.key}): {resp.status or resp.error}")
        for uid in sorted(state.forgotten)[:2]:
            if budget <= 0:
                break
            budget -= 1
            probes += 1
            resp = api.memory(state.actor, uid)
            if resp.status != 404:
                failures.append(f"GET forgotten {uid}: {resp.status or resp.error}, not 404")
    return {
        "failures": failures,
        # Each acknowledged remember (stored, live or superseded, access-logged) and each
        # acknowledged forget (every version gone).
        "writes_verified": len(remembered) + sum(s.forgets for s in keys),
        "probes": probes,
    }
