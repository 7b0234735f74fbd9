"""The reliability suite's reaper (tests/reliability/harness.py) deletes only what a run
left behind: never the directory of a run that is still starting its private server beside
it (two checkouts' CI on one machine deleted each other's that way)."""

import json
import os
import subprocess
import time

from tests.reliability.harness import OWNER_FILE, PREFIX, reap_stale_servers


def _dead_pid() -> int:
    finished = subprocess.Popen(["true"])
    finished.wait()
    return finished.pid


def _made(under, name, *, owner=None, handles=None, age_seconds=0):
    root = under / f"{PREFIX}{name}"
    (root / "pgdata").mkdir(parents=True)
    if owner is not None:
        (root / OWNER_FILE).write_text(str(owner))
    if handles is not None:
        (root / "pgdata" / ".handle_pids.json").write_text(json.dumps(handles))
    if age_seconds:
        then = time.time() - age_seconds
        os.utime(root, (then, then))
    return root


def test_a_run_still_starting_its_server_is_left_alone(tmp_path):
    # Its owner file is written before initdb, the server's handle file only after.
    starting = _made(tmp_path, "starting", owner=os.getpid())
    just_made = _made(tmp_path, "just-made")  # between mkdtemp and its first write
    serving = _made(tmp_path, "serving", owner=os.getpid(), handles=[os.getpid()])
    assert reap_stale_servers(tmp_path) == 0
    assert starting.exists() and just_made.exists() and serving.exists()


def test_what_a_finished_or_killed_run_left_is_deleted(tmp_path):
    dead = _dead_pid()
    killed = _made(tmp_path, "killed", owner=dead, handles=[dead])
    before_owner_files = _made(tmp_path, "older", handles=[dead], age_seconds=3600)
    interrupted = _made(tmp_path, "interrupted", age_seconds=3600)
    unrelated = tmp_path / "mc-replica-keep"
    unrelated.mkdir()
    assert reap_stale_servers(tmp_path) == 3
    assert not killed.exists() and not before_owner_files.exists()
    assert not interrupted.exists()
    assert unrelated.exists()


def test_a_dead_owner_with_a_live_handle_is_still_in_use(tmp_path):
    # The server's handles name the processes that use it; any one alive keeps it.
    shared = _made(tmp_path, "shared", owner=_dead_pid(), handles=[os.getpid()])
    assert reap_stale_servers(tmp_path) == 0
    assert shared.exists()
