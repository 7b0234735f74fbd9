"""Recall quality beside the speeds: `manage.py recall_eval` on the held-out set, run by the
measuring process after its measurements, in a scratch database of its own: the
evaluation writes its world of people and facts there and rolls it back, and never runs in
the bench database, whose chains would mix with that world.

The bench command (the parent, where the embedded server's superuser is in reach) makes the
scratch database and its pgvector first, as it makes the bench database's; the measuring
process then runs `recall_eval --database NAME`, which migrates it and evaluates there.

The report keeps each split's totals only (recall_eval's `totals`): DEV's breakdown and
per-question detail stay in recall_eval's own output, and TEST's individual outcomes are
never written anywhere. A failed evaluation is reported as `error` and the bench goes on.
"""

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The scratch database's default name (`bench --recall-database` names another).
DATABASE = "memory_bench_recall"
# The evaluation takes about half a minute; one that runs this long is stuck.
TIMEOUT_SECONDS = 900
# What the report keeps of each split: recall_eval's totals.
TOTALS = ("questions", "off_topic_questions", "rankings")
# How much of a failed run's output the report keeps.
ERROR_LINES = 20


def prepare(name: str) -> None:
    """Make the scratch database when it is missing, with pgvector (made as the embedded
    server's superuser; on another server a superuser makes it once, by hand)."""
    import psycopg
    from django.conf import settings
    from psycopg import sql

    from memory_console.bench import database as bench_db
    from memory_console.database import create_extension
    from memory_core.db.privileges import OWNER_ALIAS

    with psycopg.connect(bench_db.server_url("postgres", OWNER_ALIAS), autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    create_extension({**settings.DATABASES[OWNER_ALIAS], "NAME": name}, "vector")


def command(name: str, json_path: Path) -> list[str]:
    from django.conf import settings

    return [
        sys.executable,
        str(Path(settings.BASE_DIR) / "manage.py"),
        "recall_eval",
        "--split",
        "both",
        "--database",
        name,
        "--json",
        str(json_path),
    ]


def evaluate(name: str, run=subprocess.run) -> dict:
    """recall_eval's totals for DEV and TEST, evaluated in the scratch database `name`; on
    failure {"database", "error"} (and the end of its "output" when it ran). `run` has
    subprocess.run's signature."""
    from django.conf import settings

    if name == settings.DATABASES["default"]["NAME"]:
        # The measuring process's database is the bench database.
        return {"database": name, "error": "the evaluation never runs in the bench database"}
    with tempfile.TemporaryDirectory(prefix="bench-recall-") as tmp:
        out = Path(tmp) / "recall.json"
        try:
            result = run(
                command(name, out),
                cwd=settings.BASE_DIR,
                capture_output=True,
                text=True,
                timeout=TIMEOUT_SECONDS,
            )
        except (OSError, subprocess.SubprocessError) as error:
            return {"database": name, "error": f"{type(error).__name__}: {error}"}
        if result.returncode != 0:
            said = ((result.stdout or "") + (result.stderr or "")).strip().splitlines()
            return {
                "database": name,
                "error": f"recall_eval exited with {result.returncode}",
                "output": "\n".join(said[-ERROR_LINES:]),
            }
        try:
            figures = json.loads(out.read_text())
            return {"database": name, **summarise(figures)}
        except (OSError, ValueError, KeyError, TypeError) as error:
            return {"database": name, "error": f"unreadable figures: {error!r}"}


def summarise(figures: dict) -> dict:
    """The report's part of recall_eval's JSON: its embedder, limit and seconds, and each
    split's totals (DEV's breakdown, diagnosis and per-question detail left out)."""
    kept = {key: figures[key] for key in ("embedder", "limit", "seconds")}
    for split in ("dev", "test"):
        if split in figures:
            kept[split] = {key: figures[split][key] for key in TOTALS}
    if "dev" not in kept and "test" not in kept:
        raise KeyError("neither dev nor test")
    return kept


def measure(name: str, say) -> dict:
    """evaluate(), saying what it does and how it went."""
    say(f"Recall on the held-out set (recall_eval in the scratch database {name}) ...")
    started = time.monotonic()
    figures = evaluate(name)
    if "error" in figures:
        say(f"  recall_eval failed; the bench goes on: {figures['error']}")
        for line in figures.get("output", "").splitlines():
            say(f"    {line}")
    else:
        say(f"  done in {time.monotonic() - started:.0f} s")
    return figures
