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
    return "\n".join(lines)
