"""Latency summaries (nearest-rank percentiles, memory_console/loadgen/percentiles.py), the JSON
report (its shape is read by outside tools) and the printed table, with the order of its ops:
the measuring modules (run.py, console_pages.py) import this one, never the reverse."""

import json
import os
import platform
from pathlib import Path

from memory_console.bench import cpu
from memory_console.loadgen.percentiles import percentile

# Every console page in report order, measured by console_pages.py as
# `console_<page>` (the superuser) and `console_<page>_tenant` (an administrator of one
# tenant). garden is measured only where /garden/ resolves.
CONSOLE_PAGES = (
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
    "garden",
)
CONSOLE_ROLES = ("", "_tenant")


def console_op_names() -> list[str]:
    """Every console op in report order, both roles."""
    return [f"console_{page}{role}" for page in CONSOLE_PAGES for role in CONSOLE_ROLES]


OP_ORDER = (
    "turn",
    "turn_query",
    "remember",
    "readback",
    "search",
    "mcp_context",
    "mcp_remember",
    "core_read",
    "floor_b",
    "peer_read",
    "peer_put",
    "embed",
    # Every console page, as the superuser and as an administrator of one tenant.
    *console_op_names(),
)


# The most each recall op's p50 may be, as a multiple of the plain turn's p50 in the same run
# (the four are measured in the same alternating rounds, run.py ROUND_OPS).
RECALL_TARGETS = {"search": 1.5, "turn_query": 1.3, "remember": 1.0}


def recall_speed(ops: dict) -> dict | None:
    """The recall ops' p50 beside the turn's: each p50, each ratio to the turn's (two
    decimals), its target and whether the ratio as reported meets it; None when an op is
    missing."""
    names = ("turn", "turn_query", "search", "remember")
    if any(name not in ops for name in names) or not ops["turn"]["p50_ms"]:
        return None
    turn = ops["turn"]["p50_ms"]
    ratios = {name: round(ops[name]["p50_ms"] / turn, 2) for name in RECALL_TARGETS}
    return {
        **{f"{name}_p50_ms": ops[name]["p50_ms"] for name in names},
        "ratios": ratios,
        "targets": dict(RECALL_TARGETS),
        "met": {name: ratios[name] <= target for name, target in RECALL_TARGETS.items()},
    }


def recall_speed_lines(speed: dict) -> list[str]:
    """`search / turn (p50): 1.27x (target <= 1.5x: met)`, one per recall op."""
    return [
        f"{name} / turn (p50): {ratio:.2f}x (target <= {speed['targets'][name]}x: "
        f"{'met' if speed['met'][name] else 'not met'})"
        for name, ratio in speed["ratios"].items()
    ]


# The recall evaluation's figures in the table (bench/recall.py): (label, metric, out of).
RECALL_LABELS = {
    "lexical": "lexical",
    "vector": "vector",
    "vector_cut": "vector floor+cut",
    "fused": "fused",
}
RECALL_ROWS = (
    ("search @3", "search_at_3", "questions"),
    ("search @5", "search_at_5", "questions"),
    ("turn, 5 after pins", "turn_5_after_pins", "questions"),
    ("off-topic results", "off_topic_results", "off_topic_results"),
)


def recall_lines(recall: dict) -> list[str]:
    """A few lines of the recall evaluation's totals, TEST first, or why there are none."""
    if "error" in recall:
        return [f"recall: not measured, the evaluation failed: {recall['error']}"]
    lines = [
        f"recall on the held-out set ({recall['embedder']}; search limit and turn "
        f"max_memories {recall['limit']}; {recall['seconds']:.0f} s):"
    ]
    for split in ("test", "dev"):
        figures = recall.get(split)
        if not figures:
            continue
        of = {
            "questions": figures["questions"],
            "off_topic_results": recall["limit"] * figures["off_topic_questions"],
        }
        for label, metric, total in RECALL_ROWS:
            found = ", ".join(
                f"{RECALL_LABELS.get(name, name)} {ranking[metric]}"
                for name, ranking in figures["rankings"].items()
            )
            lines.append(f"recall {split.upper()} {label}: {found} of {of[total]}")
    return lines


def summary(latencies: list[float], wall_seconds: float | None = None) -> dict:
    """Latencies in seconds; rps is requests over wall time (concurrent HTTP clients) or,
    for a single-threaded in-process op, one over the mean latency."""
    values = sorted(latencies)
    total = wall_seconds if wall_seconds is not None else sum(values)
    return {
        "p50_ms": round(percentile(values, 50) * 1000, 3),
        "p95_ms": round(percentile(values, 95) * 1000, 3),
        "p99_ms": round(percentile(values, 99) * 1000, 3),
        "rps": round(len(values) / total, 1) if total > 0 else 0.0,
        "n": len(values),
    }


def machine(pg_version: str, clients: int, workers: int) -> str:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        memory = f", {kb / 1024 / 1024:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    from memory_console.management.commands.serve import DEFAULT_THREADS

    load = f", load {os.getloadavg()[0]:.2f} at start" if hasattr(os, "getloadavg") else ""
    return (
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs ({cpu}){memory}; "
        f"{pg_version}; Python {platform.python_version()}; gunicorn {workers} workers of "
        f"{DEFAULT_THREADS} threads, "
        f"{clients} HTTP clients{load}"
    )


def write(path: Path, report: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n")


def _ratio(ops: dict, a: str, b: str, field: str = "p50_ms") -> str:
    if a in ops and b in ops and ops[b][field]:
        return f"{ops[a][field] / ops[b][field]:.2f}"
    return "-"


def _difference(ops: dict, a: str, b: str, field: str = "p50_ms") -> str:
    if a in ops and b in ops:
        return f"{ops[a][field] - ops[b][field]:+.2f}"
    return "-"


def table(report: dict) -> str:
    ops = report["ops"]
    lines = [
        f"Memory Console bench, size {report['size']}",
        report["machine"],
        "",
        f"{'op':<32}{'n':>6}{'p50 ms':>10}{'p95 ms':>10}{'p99 ms':>10}{'rps':>10}"
        f"{'KiB p50':>10}{'KiB max':>10}",
    ]
    for name in OP_ORDER:
        if name in ops:
            o = ops[name]
            size = ""
            if "bytes_max" in o:  # the console pages: the HTML answered
                size = f"{o['bytes_p50'] / 1024:>10.1f}{o['bytes_max'] / 1024:>10.1f}"
            lines.append(
                f"{name:<32}{o['n']:>6}{o['p50_ms']:>10.2f}{o['p95_ms']:>10.2f}"
                f"{o['p99_ms']:>10.2f}{o['rps']:>10.1f}{size}"
            )
    v = report["verify_ledger"]
    lines += [""]
    t = report.get("throughput")
    if t:
        lines.append(
            f"throughput: {t['rps']:.0f} turns/s with {t['workers']} workers "
            f"({t['clients']} clients, {t.get('connections', 'fresh')} connections, "
            f"p50 {t['p50_ms']:.2f} ms including queueing)"
        )
        if t.get("cpu"):
            lines.append(cpu.describe(t["cpu"]))
    fresh = report.get("throughput_fresh")
    if fresh:
        lines.append(
            f"throughput (a fresh connection per turn): {fresh['rps']:.0f} turns/s "
            f"(p50 {fresh['p50_ms']:.2f} ms)"
        )
    if report.get("garden"):
        from memory_console.bench.garden import line

        lines.append(line(report["garden"]))
    if report.get("capture"):
        from memory_console.bench.capture import line as capture_line

        lines.append(capture_line(report["capture"], ops))
    for name, p in (report.get("throughput_pooled") or {}).items():
        lines.append(
            f"throughput ({'no prepared statements' if name == 'unprepared' else 'via PgBouncer'}"
            f"): {p['rps']:.0f} turns/s (p50 {p['p50_ms']:.2f} ms)"
        )
        if p.get("cpu"):
            lines.append(cpu.describe(p["cpu"]))
    r = report.get("reembed")
    if r:
        lines.append(f"reembed: {r['rows']} rows at {r['rows_per_s']:.0f} rows/s")
    seeded = report.get("seed")
    if seeded:
        lines.append(
            f"seed: {seeded['memories']} memories in {seeded['seconds']:.0f} s "
            f"(of which embedding {seeded['embed_seconds']:.0f} s)"
        )
    lines += [
        f"verify_ledger: {v['events']} events, {v['events_per_s']:.0f} events/s",
        f"turn / floor_b (p50): {_ratio(ops, 'turn', 'floor_b')}",
        f"core_read / peer_read (p50): {_ratio(ops, 'core_read', 'peer_read')}",
        f"remember / peer_put (p50): {_ratio(ops, 'remember', 'peer_put')}",
        f"mcp_context - turn (p50): {_difference(ops, 'mcp_context', 'turn')} ms",
        f"mcp_remember - remember (p50): {_difference(ops, 'mcp_remember', 'remember')} ms",
    ]
    speed = report.get("recall_speed")
    if speed:
        lines += recall_speed_lines(speed)
    if report.get("recall"):
        lines += recall_lines(report["recall"])
    return "\n".join(lines)
