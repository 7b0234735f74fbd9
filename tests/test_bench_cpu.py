"""The bench's CPU split (memory_console/bench/cpu.py): what a saturated turn cost the app
server, PostgreSQL and the load generator, read from /proc."""

import os
import subprocess
import sys
import time

import pytest

from memory_console.bench import cpu

# slow: child processes spin until /proc shows the CPU they spent.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="reads Linux's /proc"),
]

SPIN = "import time\nend = time.process_time() + {seconds}\nwhile time.process_time() < end: pass\n"


def test_split_divides_each_groups_cpu_by_the_turns_and_sums_them():
    before = {"total": 1000, "idle": 300, "steal": 0}
    after = {"total": 1200, "idle": 320, "steal": 20}

    split = cpu.split(
        {"app": 0.4, "postgres": 0.3}, before, after, 100, 2, ["app", "postgres", "loadgen"]
    )

    assert split == {
        "app_ms": 4.0,
        "postgres_ms": 3.0,
        "loadgen_ms": None,  # not seen: no share is made up for it
        "total_ms": 7.0,
        "cpu_bound_rps": 285.7,  # 2 cores x 1000 ms / 7 ms
        "busy_pct": 80.0,  # (200 - 20 idle - 20 stolen) / 200
        "steal_pct": 10.0,
    }


def test_split_without_turns_or_machine_times_says_unknown_rather_than_dividing_by_zero():
    split = cpu.split({"app": 1.0}, None, None, 0, 2, ["app"])

    assert split["app_ms"] is None and split["total_ms"] == 0
    assert split["cpu_bound_rps"] is None
    assert split["busy_pct"] is None and split["steal_pct"] is None


def test_a_process_tree_counts_the_cpu_its_children_spend(tmp_path):
    done = tmp_path / "done"
    child = (
        "import pathlib, time\ntime.sleep(0.5)\n"
        + SPIN.format(seconds=0.4)
        + f"pathlib.Path({str(done)!r}).touch()\ntime.sleep(60)\n"
    )
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', {child!r}])\n",
        ]
    )
    try:
        deadline = time.monotonic() + 10
        members = cpu.tree(parent.pid)
        while len(members) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
            members = cpu.tree(parent.pid)
        assert parent.pid in members and len(members) == 2
        meter = cpu.CpuSplit({"app": members, "loadgen": {os.getpid()}})
        while not done.exists() and time.monotonic() < deadline + 20:
            time.sleep(0.05)
        split = meter.per_turn(2)
    finally:
        for pid in cpu.tree(parent.pid):
            os.kill(pid, 9)
        parent.wait()
    # The grandchild's 0.4 s of spinning, over two turns (the tree was read while it slept).
    assert 180 <= split["app_ms"] < 1000
    assert split["loadgen_ms"] < 100  # this process only waited


def test_process_seconds_reads_a_running_processes_cpu():
    child = subprocess.Popen(
        [sys.executable, "-c", SPIN.format(seconds=0.5) + "import time; time.sleep(30)\n"]
    )
    try:
        deadline = time.monotonic() + 20
        while cpu.process_seconds(child.pid) < 0.45 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert 0.45 <= cpu.process_seconds(child.pid) < 5
        assert cpu.parent_of(child.pid) == os.getpid()
    finally:
        child.kill()
        child.wait()
    assert cpu.process_seconds(child.pid) == 0.0  # gone


@pytest.mark.django_db
def test_the_local_postgres_server_is_found_through_this_connections_backend():
    from django.db import connection

    root = cpu.postgres_root(connection)

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    if not os.path.exists(f"/proc/{backend}"):
        assert root is None  # a server on another machine
    else:
        assert root == cpu.parent_of(backend)
        assert backend in cpu.tree(root)


def test_the_tables_line_names_each_part_and_the_machine():
    line = cpu.describe(
        {
            "app_ms": 3.9,
            "postgres_ms": 3.8,
            "loadgen_ms": 0.4,
            "pooler_ms": None,
            "total_ms": 8.1,
            "cpu_bound_rps": 246.9,
            "busy_pct": 90.2,
            "steal_pct": 6.0,
        }
    )

    assert line == (
        "  CPU per turn (ms): app 3.90, PostgreSQL 3.80, load generator 0.40; total 8.10"
        " (at most 247 turns/s with every core on turns); machine 90 % busy, 6 % stolen"
    )


def test_a_process_that_ends_during_the_load_takes_nothing_from_the_others(tmp_path):
    go = tmp_path / "go"
    # One process spins before the load and ends during it; the other waits for the load
    # to start, then spins 0.3 s and stays.
    ended = subprocess.Popen(
        [sys.executable, "-c", SPIN.format(seconds=0.5) + "import time; time.sleep(1)\n"]
    )
    waiting = (
        f"import pathlib, time\nwhile not pathlib.Path({str(go)!r}).exists(): time.sleep(0.01)\n"
        + SPIN.format(seconds=0.3)
        + "time.sleep(60)\n"
    )
    stays = subprocess.Popen([sys.executable, "-c", waiting])
    try:
        deadline = time.monotonic() + 20
        while cpu.process_seconds(ended.pid) < 0.45 and time.monotonic() < deadline:
            time.sleep(0.05)
        meter = cpu.CpuSplit({"app": {ended.pid, stays.pid}})
        go.touch()
        ended.wait(timeout=20)
        while cpu.process_seconds(stays.pid) < 0.3 and time.monotonic() < deadline:
            time.sleep(0.05)
        split = meter.per_turn(1)
    finally:
        for child in (ended, stays):
            child.kill()
            child.wait()
    # The spinner's 0.3 s, not less the half second the ended one had spent before.
    assert 250 <= split["app_ms"] < 1000
