"""`manage.py bench_ab`: two real servers compared over HTTP; its refusals change nothing.

Asserts what the comparison ran and left behind, never its timings.
"""

import json
import uuid

import psycopg
import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from memory_console.bench import database as bench_db
from memory_core import writes
from memory_core.db.privileges import OWNER_ALIAS
from memory_core.models import ApiKey, Memory

OPS = ["turn", "turn_query", "search", "remember", "readback"]


def _test_database() -> str:
    return settings.DATABASES["default"]["NAME"]


@pytest.mark.slow  # two gunicorn servers on the test database
def test_bench_ab_measures_every_op_on_both_sides_and_revokes_its_keys(
    org, transactional_db, tmp_path, capsys
):
    writes.remember(org.u1, "editor", "writes code in Neovim", principal=org.acme_agent)
    out = tmp_path / "ab.json"
    call_command(
        "bench_ab",
        a_database=_test_database(),
        ops=",".join(OPS),
        requests=10,
        warmup=1,
        clients=1,
        workers=1,
        seed=3,
        b_env=["MEMORY_EMBEDDER=none"],
        out=out,
    )

    report = json.loads(out.read_text())
    assert report["ops"] == OPS
    assert report["sides"]["A"]["env"] == {}
    assert report["sides"]["B"]["env"] == {"MEMORY_EMBEDDER": "none"}
    assert report["sides"]["A"]["database"] == report["sides"]["B"]["database"] == _test_database()
    (run,) = report["runs"]
    for side in ("A", "B"):
        assert set(run[side]) == set(OPS)
        for figure in run[side].values():
            assert figure["n"] == 10 and figure["p50_ms"] > 0
    printed = capsys.readouterr().out
    assert "turn_query × turn" in printed and "search × turn" in printed
    # The requests were served: both sides' remembers wrote (the bench's own keys) ...
    assert Memory.objects.filter(key__startswith="bench-note-").count() >= 2
    # ... and the comparison's two keys are revoked.
    made = ApiKey.objects.filter(name="bench_ab")
    assert made.count() == 2 and not made.filter(revoked_at__isnull=True).exists()


@pytest.mark.parametrize(
    "options, needle",
    [
        ({"ops": "turn,dance"}, "--ops takes"),
        ({"ops": ","}, "--ops takes"),
        ({"b_env": ["MEMORY_EMBEDDER"]}, "--b-env takes KEY=VALUE"),
        ({"a_env": ["=none"]}, "--a-env takes KEY=VALUE"),
        ({"requests": 0}, "--requests must be at least 1"),
        ({"warmup": -1}, "--warmup must not be negative"),
        ({"b_database": "no_such_database_here"}, "there is no database no_such_database_here"),
        ({"b_database": "postgres"}, "is not a Memory Console database"),
        ({"b_project": "/tmp"}, "no manage.py there"),
    ],
)
def test_bench_ab_refuses_bad_options_before_it_serves_or_writes(org, options, needle):
    keys_before = ApiKey.objects.count()
    with pytest.raises(CommandError, match=needle):
        call_command("bench_ab", a_database=_test_database(), **options)
    assert ApiKey.objects.count() == keys_before


def test_bench_ab_refuses_a_side_b_without_side_a_s_actors(org, transactional_db):
    other = f"{_test_database()}_ab_{uuid.uuid4().hex[:8]}"
    admin = bench_db.server_url("postgres", OWNER_ALIAS)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{other}"')
    try:
        with psycopg.connect(bench_db.server_url(other, OWNER_ALIAS), autocommit=True) as conn:
            conn.execute("CREATE TABLE memory_core_actor (ref text, erased_at timestamptz)")
            conn.execute("GRANT SELECT ON memory_core_actor TO PUBLIC")  # the server's role
        with pytest.raises(CommandError, match=r"lacks \d+ of A's actors"):
            call_command("bench_ab", a_database=_test_database(), b_database=other)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE "{other}" WITH (FORCE)')


def test_bench_ab_without_a_bench_database_names_the_command_that_makes_one(db, monkeypatch):
    monkeypatch.setattr(bench_db, "default_name", lambda size: f"missing_bench_{size}")
    with pytest.raises(CommandError, match=r"no database missing_bench_1m \(bench --size 1m\)"):
        call_command("bench_ab", size="1m")
