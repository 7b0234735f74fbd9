"""Concurrent HTTP clients: a fixed number of requests per operation, after a warm-up.

Each client is a thread sending one request at a time (memory_console/loadgen/client.py): a
fresh loopback connection each, as many independent agents' requests arrive, or with
`keep_alive` one connection per client for all its requests, as an agent's HTTP client does;
a request's latency is from before connecting to the last byte of the answer. A request
that does not answer with the expected status fails the run: a benchmark of errors would
measure nothing.
"""

import threading
import time

from memory_console.loadgen.client import KeptAlive, request


class BadStatus(RuntimeError):
    pass


def drive(
    port: int,
    headers: dict,
    make_request,
    clients: int,
    warmup: int,
    n: int,
    sizes: list | None = None,
    keep_alive: bool = False,
    measured=None,
):
    """Run `warmup` then `n` requests over `clients` threads; returns (latencies_s, wall_s).

    make_request(i) returns (method, path, body, expected statuses) for request i. When
    `sizes` is a list, the body size in bytes of each measured answer is appended to it.
    `measured()`, when given, is called between the warm-up and the measured requests.
    """
    errors: list[BaseException] = []

    def run(count: int, offset: int, latencies: list | None, sizes: list | None = None):
        lock = threading.Lock()
        counter = iter(range(offset, offset + count))

        def worker():
            kept = KeptAlive(port) if keep_alive else None
            try:
                send(kept)
            finally:
                if kept is not None:
                    kept.close()

        def send(kept):
            while not errors:
                with lock:
                    i = next(counter, None)
                if i is None:
                    return
                try:
                    method, path, body, expect = make_request(i)
                    if kept is not None:
                        resp = kept.request(method, path, body=body, headers=headers)
                    else:
                        resp = request(port, method, path, body=body, headers=headers)
                except BaseException as error:  # noqa: BLE001 - reported after join
                    errors.append(error)
                    return
                if resp.status not in expect:
                    detail = resp.error or repr(resp.body[:300])
                    errors.append(BadStatus(f"{method} {path} -> {resp.status}: {detail}"))
                    return
                if latencies is not None:
                    latencies.append(resp.elapsed)
                if sizes is not None:
                    sizes.append(len(resp.body))

        threads = [threading.Thread(target=worker) for _ in range(clients)]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            raise errors[0]
        return time.perf_counter() - started

    run(warmup, 0, None)
    if measured is not None:
        measured()
    latencies: list[float] = []
    wall = run(n, warmup, latencies, sizes)
    return latencies, wall
