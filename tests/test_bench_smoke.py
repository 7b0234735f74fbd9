"""The benchmark harness runs end to end at a tiny size, so it cannot rot.

Asserts the report's shape (outside tools read it), never its timings. The peer is measured
only where the `bench` extra (langgraph-checkpoint-postgres) is installed.
"""

import json

import pytest
from django.conf import settings
from django.core.management import call_command

from memory_console.bench import console_pages, peer, report
from memory_console.loadgen import pooler

HTTP_OPS = {
    "turn",
    "turn_query",
    "remember",
    "readback",
    "search",
    "mcp_context",
    "mcp_remember",
}
# Every console page as the superuser and as an administrator of one tenant;
# /garden/ only where it is routed.
CONSOLE_PAGES = {
    "dashboard",
    "scopes",
    "scope",
    "actor",
    "memory",
    "conflicts",
    "ledger",
    "access",
    "attribution_line",
    "attribution_run",
    "runs",
    "run",
    "conversation",
    "keys",
    "users",
    "finder",
}
IN_PROCESS_OPS = {"core_read", "floor_b", "embed"}
PEER_OPS = {"peer_read", "peer_put"}
OP_FIELDS = {"p50_ms", "p95_ms", "p99_ms", "rps", "n"}
SIZE_FIELDS = {"bytes_p50", "bytes_max"}


def console_ops() -> set[str]:
    pages = CONSOLE_PAGES | ({"garden"} if console_pages.garden_resolves() else set())
    return {f"console_{page}{role}" for page in pages for role in ("", "_tenant")}


@pytest.mark.slow  # seeds a database and runs every operation against a real server
def test_bench_at_tiny_size_writes_the_report_shape(tmp_path):
    out = tmp_path / "tiny.json"
    # Its own database per test database name, so engineers running the suite side by
    # side never share (or drop) each other's bench database.
    dbname = f"{settings.DATABASES['default']['TEST']['NAME']}_bench_tiny"
    # The recall evaluation (half a minute, its own scratch database) is left out; its part
    # of the report is tested in tests/test_bench_recall_report.py.
    call_command(
        "bench", size="tiny", out=out, database=dbname, requests=6, warmup=2, no_recall=True
    )

    report = json.loads(out.read_text())
    # "seed" only when this run seeded the database (a reused one was seeded before).
    # "throughput_pooled" when Debian's pgbouncer is installed (memory_console/bench/pooled.py).
    pooled = report.get("throughput_pooled")
    if pooler.binary() is not None:
        assert set(pooled) == {"unprepared", "pgbouncer"}
        for figure in pooled.values():
            assert figure["op"] == "turn" and figure["n"] == 6 and figure["rps"] > 0
        assert_cpu_split(pooled["unprepared"]["cpu"], {"app", "postgres", "loadgen"})
        assert_cpu_split(pooled["pgbouncer"]["cpu"], {"app", "postgres", "loadgen", "pooler"})
    assert set(report) - {"seed", "throughput_pooled"} == {
        "size",
        "machine",
        "ops",
        "verify_ledger",
        "verify_checkpoint",
        "throughput",
        "throughput_fresh",
        "embed_ms",
        "reembed",
        "garden",
        "capture",
        "recall_speed",
    }
    # The recall ops' p50 as multiples of the turn's, all four from the same rounds.
    speed = report["recall_speed"]
    assert set(speed) == {
        "turn_p50_ms",
        "turn_query_p50_ms",
        "search_p50_ms",
        "remember_p50_ms",
        "ratios",
        "targets",
        "met",
    }
    for name in ("turn", "turn_query", "search", "remember"):
        assert speed[f"{name}_p50_ms"] == report["ops"][name]["p50_ms"]
    assert speed["targets"] == {"search": 1.5, "turn_query": 1.3, "remember": 1.0}
    assert set(speed["ratios"]) == set(speed["met"]) == set(speed["targets"])
    assert all(ratio > 0 for ratio in speed["ratios"].values())
    capture = report["capture"]
    assert set(capture) == {
        "threads",
        "messages",
        "memories",
        "seconds",
        "messages_per_s",
        "model_requests",
        "turn_busy",
        "remember_busy",
        "busy_threads",
        "busy_messages",
        "busy_memories",
        "busy_throughout",
    }
    assert capture["messages"] == capture["threads"] * 8 and capture["messages_per_s"] > 0
    assert capture["memories"] > 0 and capture["busy_messages"] == capture["busy_threads"] * 8
    for name in ("turn_busy", "remember_busy"):
        assert set(capture[name]) == OP_FIELDS and capture[name]["n"] == 6
    assert set(report["garden"]) == {"seconds", "memories", "proposals"}
    assert report["garden"]["memories"] > 0 and report["garden"]["seconds"] >= 0
    assert report["embed_ms"] == report["ops"]["embed"]["p50_ms"] > 0
    assert set(report["reembed"]) == {"rows", "seconds", "rows_per_s"}
    assert report["reembed"]["rows"] > 0 and report["reembed"]["rows_per_s"] > 0
    if "seed" in report:
        assert report["seed"]["memories"] > 0 and report["seed"]["embed_seconds"] >= 0
    assert report["size"] == "tiny"
    assert isinstance(report["machine"], str) and report["machine"]
    expected = HTTP_OPS | console_ops() | IN_PROCESS_OPS
    expected |= PEER_OPS if peer.available() else set()
    assert set(report["ops"]) == expected
    for name, op in report["ops"].items():
        if name.startswith("console_"):
            # The console pages also report the size of the HTML they answered.
            assert set(op) == OP_FIELDS | SIZE_FIELDS, name
            assert 0 < op["bytes_p50"] <= op["bytes_max"], name
        else:
            assert set(op) == OP_FIELDS, name
        assert op["n"] == 6, name
        assert 0 < op["p50_ms"] <= op["p95_ms"] <= op["p99_ms"], name
        assert op["rps"] > 0, name
    # Saturated turns: each client on one kept-alive connection, then a fresh one per turn.
    for name, connections in (("throughput", "kept alive"), ("throughput_fresh", "fresh")):
        throughput = report[name]
        assert set(throughput) == {"op", "clients", "workers", "connections", "cpu"} | OP_FIELDS
        assert throughput["op"] == "turn" and throughput["connections"] == connections
        assert throughput["clients"] > throughput["workers"] == 2
        assert throughput["n"] == 6 and throughput["rps"] > 0
        assert_cpu_split(throughput["cpu"], {"app", "postgres", "loadgen"})
    verify = report["verify_ledger"]
    assert set(verify) == {"events", "events_per_s"}
    assert verify["events"] > 400  # the seeded memories' events, and the bench's own
    assert verify["events_per_s"] > 0
    against = report["verify_checkpoint"]
    assert set(against) == {"events", "events_per_s"}
    assert against["events"] >= verify["events"] and against["events_per_s"] > 0


def assert_cpu_split(split: dict, parts: set[str]) -> None:
    """What a saturated turn cost each process group (memory_console/bench/cpu.py); the
    tests' PostgreSQL is the embedded one, on this machine, so every part is seen."""
    assert set(split) == {f"{p}_ms" for p in parts} | {
        "total_ms",
        "cpu_bound_rps",
        "busy_pct",
        "steal_pct",
    }
    # /proc counts in clock ticks (10 ms): six turns may read as none at all.
    assert all(split[f"{p}_ms"] >= 0 for p in parts)
    assert split["total_ms"] == pytest.approx(sum(split[f"{p}_ms"] for p in parts), abs=0.05)
    if split["busy_pct"] is not None:
        assert 0 <= split["busy_pct"] <= 100 and 0 <= split["steal_pct"] <= 100


def test_every_console_op_is_in_the_report_order_and_the_table_shows_sizes():
    assert console_ops() <= set(report.OP_ORDER)
    ops = {
        name: {"p50_ms": 1.0, "p95_ms": 2.0, "p99_ms": 3.0, "rps": 4.0, "n": 5}
        for name in ("turn", "console_actor_tenant")
    }
    ops["console_actor_tenant"].update(bytes_p50=2048, bytes_max=4096)
    table = report.table(
        {
            "size": "tiny",
            "machine": "m",
            "ops": ops,
            "verify_ledger": {"events": 1, "events_per_s": 1.0},
        }
    )
    row = next(line for line in table.splitlines() if line.startswith("console_actor_tenant"))
    assert row.split()[-2:] == ["2.0", "4.0"]  # KiB p50, KiB max
    assert "KiB p50" in table
