"""Where a saturated turn's CPU goes: the app server, PostgreSQL, the load generator.

On a machine where all three share the cores, turns per second is the cores' time over the
CPU a turn costs in all, less whatever the cores spend idle or the host takes back (steal,
on a virtual machine). The bench reports each part per turn beside the rate, so a slow run
shows whether the turn grew or the machine was busy elsewhere.

Read from Linux's /proc (a process's utime + stime; the machine's /proc/stat); elsewhere,
or for a PostgreSQL on another machine, the parts that cannot be read are None.
"""

import os
from pathlib import Path

PROC = Path("/proc")


def _ticks() -> int:
    try:
        return os.sysconf("SC_CLK_TCK")
    except (AttributeError, ValueError, OSError):
        return 100


TICKS = _ticks()  # /proc counts CPU time in clock ticks


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/<pid>/stat after the command (which may hold spaces and parentheses)."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()


def process_seconds(pid: int) -> float:
    """User + system CPU seconds of one process (0 if it is gone)."""
    fields = _stat_fields(pid)
    if fields is None:
        return 0.0
    # After the command: state, ppid, ..., utime is field 14 of the whole line, stime 15.
    return (int(fields[11]) + int(fields[12])) / TICKS


def parent_of(pid: int) -> int | None:
    fields = _stat_fields(pid)
    return int(fields[1]) if fields is not None else None


def tree(root: int) -> set[int]:
    """`root` and every process under it, as they are now."""
    children: dict[int, list[int]] = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            parent = parent_of(int(entry.name))
            if parent is not None:
                children.setdefault(parent, []).append(int(entry.name))
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, ()))
    return found


def machine_ticks() -> dict[str, int] | None:
    """The machine's CPU time so far, from the first line of /proc/stat: all of it, the
    idle part (idle + iowait) and the part the host took (steal)."""
    try:
        values = [int(v) for v in (PROC / "stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return None
    # user nice system idle iowait irq softirq steal [guest guest_nice: inside user/nice]
    total = sum(values[:8])
    return {"total": total, "idle": values[3] + values[4], "steal": values[7]}


class CpuSplit:
    """Snapshot before and after a load; `per_turn(turns)` divides what each group of
    processes spent. Groups: name -> its processes (tree(root) for a server and its
    workers), or None where they cannot be seen. Only processes there at both snapshots
    count (not a worker gunicorn replaced mid-run): the report can say less CPU than was
    spent, never more."""

    def __init__(self, groups: dict[str, set[int] | None]):
        self.groups = groups
        self.start = {pid: process_seconds(pid) for pids in groups.values() if pids for pid in pids}
        self.machine = machine_ticks()

    def per_turn(self, turns: int) -> dict:
        spent = {}
        for name, pids in self.groups.items():
            if pids is not None:
                now = {pid: process_seconds(pid) for pid in pids}  # 0 once a process is gone
                spent[name] = sum(max(0.0, now[pid] - self.start[pid]) for pid in pids if now[pid])
        return split(
            spent, self.machine, machine_ticks(), turns, os.cpu_count() or 1, list(self.groups)
        )


def split(
    spent: dict[str, float], machine_before, machine_after, turns: int, cores: int, names
) -> dict:
    """Milliseconds of CPU per turn for each group from the seconds it `spent` (None where
    unknown), their total, the machine's busy and stolen shares between its two
    machine_ticks(), and the rate the turns' own CPU would allow with every core busy on
    them (`cpu_bound_rps`)."""
    result: dict = {}
    total = 0.0
    for name in names:
        if name in spent and turns > 0:
            per_turn = spent[name] * 1000 / turns
            result[f"{name}_ms"] = round(per_turn, 2)
            total += per_turn
        else:
            result[f"{name}_ms"] = None
    result["total_ms"] = round(total, 2)
    result["cpu_bound_rps"] = round(cores * 1000 / total, 1) if total > 0 else None
    result["busy_pct"] = result["steal_pct"] = None
    if machine_before and machine_after:
        elapsed = machine_after["total"] - machine_before["total"]
        idle = machine_after["idle"] - machine_before["idle"]
        steal = machine_after["steal"] - machine_before["steal"]
        if elapsed > 0:
            result["busy_pct"] = round(100 * (elapsed - idle - steal) / elapsed, 1)
            result["steal_pct"] = round(100 * steal / elapsed, 1)
    return result


def postgres_root(connection) -> int | None:
    """The local PostgreSQL server's postmaster (the parent of this connection's backend),
    or None when the server runs elsewhere or behind a pooler we cannot see through."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    try:
        command = (PROC / str(backend) / "cmdline").read_bytes()
    except OSError:
        return None
    if b"postgres" not in command:
        return None  # a process of that number here is not our backend
    return parent_of(backend)


def groups(server: int, postgres: int | None, pooler: int | None = None) -> dict:
    """The processes of a bench load: the app server with its workers, the PostgreSQL
    server with its backends (None when it is not on this machine), this process (the
    load generator's client threads), and the pooler when there is one."""
    found = {
        "app": tree(server),
        "postgres": tree(postgres) if postgres is not None else None,
        "loadgen": {os.getpid()},
    }
    if pooler is not None:
        found["pooler"] = tree(pooler)  # runuser and the pgbouncer under it
    return found


NAMES = {"app": "app", "postgres": "PostgreSQL", "loadgen": "load generator", "pooler": "pooler"}


def describe(split: dict) -> str:
    """The printed table's line for a report's `cpu`."""
    parts = [
        f"{NAMES.get(name[:-3], name[:-3])} {value:.2f}"
        for name, value in split.items()
        if name.endswith("_ms") and name != "total_ms" and value is not None
    ]
    line = f"  CPU per turn (ms): {', '.join(parts)}; total {split['total_ms']:.2f}"
    if split.get("cpu_bound_rps"):
        line += f" (at most {split['cpu_bound_rps']:.0f} turns/s with every core on turns)"
    if split.get("busy_pct") is not None:
        line += f"; machine {split['busy_pct']:.0f} % busy, {split['steal_pct']:.0f} % stolen"
    return line
