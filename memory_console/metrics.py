"""GET /metrics: Prometheus text format, from the official client library (prometheus_client).

Under `serve` every gunicorn worker is its own process: each writes its samples to files in
PROMETHEUS_MULTIPROC_DIR (which `serve` points at settings.METRICS_DIR and empties before
forking), and a scrape, whichever worker answers it, adds up every worker's files
(MultiProcessCollector). Without that variable (the test client, runserver) the samples
live in this process's default registry.

What is measured:
- requests and their latency per route name (the URL pattern's name, or the API
  operation's), never the raw path, so ids in URLs do not explode the series;
- turns' stats (offered, omitted, pinned_omitted, recalled) as counters;
- ledger appends: the ledger's highest event id, read from PostgreSQL at scrape time, so
  `rate()` over it is the append rate of every server together;
- the database pool of each worker (size, idle connections, requests waiting);
- each replica's replay lag, measured at scrape time (memory_console/routers.py);
- embedder errors (every "embedder unavailable" the core logs).

Protection: with METRICS_TOKEN set, `Authorization: Bearer <METRICS_TOKEN>` (compared in
constant time; else 401); without it, only clients at a loopback address (else 403).
"""

import hmac
import ipaddress
import logging
import os
import time

from django.conf import settings
from django.db import connections
from django.http import HttpResponse
from django.views.decorators.http import require_GET
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import CounterMetricFamily

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"

REQUESTS = Counter(
    "memory_http_requests_total",
    "Requests answered, by route name, method and status class.",
    ["route", "method", "status"],
)
LATENCY = Histogram(
    "memory_http_request_seconds",
    "Time to answer a request, by route name.",
    ["route"],
    buckets=(0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
TURN_STATS = ("offered", "omitted", "pinned_omitted", "recalled")
TURN_MEMORIES = Counter(
    "memory_turn_memories_total",
    "Memories counted by turns' stats: offered, omitted, pinned_omitted, recalled.",
    ["stat"],
)
TURNS = Counter("memory_turns_total", "Turns answered.")
EMBEDDER_ERRORS = Counter(
    "memory_embedder_errors_total",
    "Calls to the embedder that failed (memory_core.recall.providers).",
)
POOL = Gauge(
    "memory_db_pool_connections",
    "The `default` database pool of each worker: its size, idle connections, waiting requests.",
    ["state"],
    multiprocess_mode="livesum",
)
REPLICA_LAG = Gauge(
    "memory_replica_lag_seconds",
    "Seconds of WAL a replica has received but not yet replayed (-1: unreachable).",
    ["replica"],
    multiprocess_mode="mostrecent",
)
REPLICA_UP = Gauge(
    "memory_replica_up",
    "1 if the replica answered the last check, 0 if not.",
    ["replica"],
    multiprocess_mode="mostrecent",
)


def route_name(request) -> str:
    """The matched URL pattern's name (an API operation's url_name or its view's name);
    "unmatched" for a path no pattern took (a 404 before routing)."""
    match = getattr(request, "resolver_match", None)
    if match is None:
        return "unmatched"
    return match.view_name or match.url_name or getattr(match.func, "__name__", "view")


# Labelled children, looked up once per label set: labels() costs more than the increment.
_request_children: dict[tuple, tuple] = {}
_turn_children = {name: TURN_MEMORIES.labels(name) for name in TURN_STATS}
# The pool's figures are read at most this often per process (reading them takes its lock).
POOL_EVERY_SECONDS = 1.0
_pool_read_at = 0.0


def observe_request(request, status: int, seconds: float) -> None:
    global _pool_read_at
    labels = (route_name(request), request.method, f"{status // 100}xx")
    children = _request_children.get(labels)
    if children is None:
        children = (REQUESTS.labels(*labels), LATENCY.labels(labels[0]))
        _request_children[labels] = children
    children[0].inc()
    children[1].observe(seconds)
    now = time.monotonic()
    if now - _pool_read_at >= POOL_EVERY_SECONDS:
        _pool_read_at = now
        _observe_pool()


def observe_turn(stats: dict) -> None:
    TURNS.inc()
    for name, child in _turn_children.items():
        value = stats.get(name)
        if value:
            child.inc(value)


def _observe_pool() -> None:
    pool = getattr(connections["default"], "pool", None) if _pool_made() else None
    if pool is None:
        return
    stats = pool.get_stats()
    POOL.labels("size").set(stats.get("pool_size", 0))
    POOL.labels("idle").set(stats.get("pool_available", 0))
    POOL.labels("waiting").set(stats.get("requests_waiting", 0))


def _pool_made() -> bool:
    # Django makes a connection's pool on first use; asking for .pool would make one.
    wrapper = connections["default"]
    return wrapper.alias in type(wrapper)._connection_pools


class EmbedderErrors(logging.Handler):
    """Counts the core's "embedder unavailable" warnings (installed once, at import)."""

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.WARNING:
            EMBEDDER_ERRORS.inc()


_embedder_logger = logging.getLogger("memory_core.recall.providers")
if not any(isinstance(h, EmbedderErrors) for h in _embedder_logger.handlers):
    _embedder_logger.addHandler(EmbedderErrors())


class LedgerCollector:
    """The ledger's appends, read from PostgreSQL at scrape time: the same figure whichever
    worker or server is asked."""

    def collect(self):
        family = CounterMetricFamily(
            "memory_ledger_events",
            "Ledger events appended (the highest event id; rate() of it is the append rate).",
        )
        try:
            with connections["default"].cursor() as cursor:
                cursor.execute("SELECT coalesce(max(id), 0) FROM memory_core_ledgerevent")
                family.add_metric([], cursor.fetchone()[0])
        except Exception:  # noqa: BLE001 - the database down must not fail the scrape
            return
        yield family


def registry() -> CollectorRegistry:
    if os.environ.get(MULTIPROC_ENV):
        collected = CollectorRegistry()
        multiprocess.MultiProcessCollector(collected)
    else:
        collected = CollectorRegistry()
        collected.register(_DefaultRegistry())
    collected.register(LedgerCollector())
    return collected


class _DefaultRegistry:
    def collect(self):
        return REGISTRY.collect()


def refusal(request) -> HttpResponse | None:
    """None if the request may read the metrics, else the answer: 401 without the right
    bearer token (METRICS_TOKEN set), 403 from a non-loopback address (no token set)."""
    token = settings.METRICS_TOKEN
    if token:
        header = request.META.get("HTTP_AUTHORIZATION", "")
        scheme, _, given = header.partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(
            given.strip().encode(), token.encode()
        ):
            return None
        response = HttpResponse("a bearer token is required\n", status=401, content_type=TEXT)
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    try:
        if ipaddress.ip_address(request.META.get("REMOTE_ADDR", "")).is_loopback:
            return None
    except ValueError:
        pass
    return HttpResponse(
        "metrics are served to loopback clients only (or set METRICS_TOKEN)\n",
        status=403,
        content_type=TEXT,
    )


TEXT = "text/plain; charset=utf-8"


@require_GET
def metrics_view(request):
    refused = refusal(request)
    if refused is not None:
        return refused
    from memory_console import routers

    for alias in settings.DATABASE_REPLICAS:
        lag = routers.replica_lag(alias)
        REPLICA_UP.labels(alias).set(0 if lag is None else 1)
        REPLICA_LAG.labels(alias).set(-1 if lag is None else lag)
    response = HttpResponse(generate_latest(registry()), content_type=CONTENT_TYPE_LATEST)
    response["Cache-Control"] = "no-store"
    return response
