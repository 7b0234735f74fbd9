"""The TypeScript client (clients/typescript): its Node tests against a live server, its
generated types against the server's OpenAPI document, and its package.

They need Node and the package's dev dependencies (`npm ci` in clients/typescript, which
.ci/run does). Outside CI a machine without them skips these tests, saying why; under
CI=true they fail instead.
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from memory_console.management.commands.export_openapi import openapi_text
from memory_core import writes
from memory_core.models import AccessLog, Memory

# slow: Node processes, the TypeScript compiler, and a live server.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "clients" / "typescript"
BIN = PACKAGE / "node_modules" / ".bin"


def missing(reason: str):
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI must have it: see .ci/run)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def node():
    """`node`, with the package's dev dependencies installed and its build fresh."""
    path = shutil.which("node")
    if path is None:
        missing("node is not installed")
    if not (BIN / "tsc").exists() or not (BIN / "openapi-typescript").exists():
        missing("clients/typescript has no node_modules: run `npm ci` there")
    built = subprocess.run(
        [str(BIN / "tsc"), "-p", "tsconfig.json"], cwd=PACKAGE, capture_output=True, text=True
    )
    assert built.returncode == 0, built.stdout + built.stderr
    return path


def test_the_node_tests_pass_against_the_live_server(node, live_server, org, operator):
    policy = writes.publish(org.acme, "units", "report distances in kilometres", principal=operator)
    env = {
        **os.environ,
        "MEMORY_CONSOLE_URL": live_server.url,
        "MEMORY_CONSOLE_KEY": org.acme_secret,
        "MEMORY_CONSOLE_POLICY_ID": policy.uid,
    }
    result = subprocess.run(
        [node, "--test", "--test-reporter=tap", "test/"],
        cwd=PACKAGE,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    report = result.stdout + result.stderr
    assert result.returncode == 0, report
    assert "# fail 0" in report and "# pass 0" not in report

    rows = AccessLog.objects.filter(channel="api", principal=f"key:{org.acme_key.prefix}")
    assert {("actor.put", 200), ("remember", 201), ("forget", 204), ("forget", 403)} <= {
        (row.action, row.outcome) for row in rows
    }
    assert not Memory.objects.filter(scope__token="actor:acme/ts1").exists()  # forgotten
    assert Memory.objects.live().filter(uid=policy.uid).exists()


def test_the_typescript_quickstart_of_the_docs(node, live_server, org, operator, tmp_path):
    """docs/examples/typescript_quickstart.mjs, run where the package is installed (a
    node_modules entry pointing at clients/typescript), as a user's project would."""
    policy = writes.publish(org.acme, "units", "report distances in kilometres", principal=operator)
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "memory-console-client").symlink_to(PACKAGE)
    example = tmp_path / "quickstart.mjs"
    shutil.copy(ROOT / "docs" / "examples" / "typescript_quickstart.mjs", example)
    env = {
        **os.environ,
        "MEMORY_CONSOLE_URL": live_server.url,
        "MEMORY_CONSOLE_KEY": org.acme_secret,
    }
    result = subprocess.run(
        [node, str(example)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "<memory>"
    assert "- [tenant:acme] units: report distances in kilometres" in lines
    assert any(line.startswith("remembered meeting-hours at actor:acme/u1 (mem_") for line in lines)
    assert "[ 'meeting-hours' ]" in lines
    assert lines[-1] == "404 memory not found"
    assert not Memory.objects.filter(key="meeting-hours").exists()
    assert Memory.objects.live().filter(uid=policy.uid).exists()


def test_the_generated_types_are_those_of_the_current_schema(node, tmp_path):
    """The committed document is the server's, and the committed types are what
    openapi-typescript generates from it now: regenerate both with
    `python manage.py export_openapi clients/typescript/openapi.json` and
    `npm --prefix clients/typescript run generate`."""
    fresh = openapi_text()
    committed = (PACKAGE / "openapi.json").read_text(encoding="utf-8")
    assert json.loads(committed) == json.loads(fresh), "clients/typescript/openapi.json is stale"
    assert committed == fresh

    (tmp_path / "openapi.json").write_text(fresh, encoding="utf-8")
    generated = subprocess.run(
        [str(BIN / "openapi-typescript"), "openapi.json", "-o", "schema.ts"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert generated.returncode == 0, generated.stderr
    stale = (PACKAGE / "src" / "schema.ts").read_text(encoding="utf-8")
    assert stale == (tmp_path / "schema.ts").read_text(encoding="utf-8"), (
        "clients/typescript/src/schema.ts is stale"
    )


def test_npm_pack_ships_the_built_module_and_its_types_only(node):
    npm = shutil.which("npm")
    if npm is None:
        missing("npm is not installed")
    packed = subprocess.run(
        [npm, "pack", "--dry-run", "--json", "--ignore-scripts"],
        cwd=PACKAGE,
        capture_output=True,
        text=True,
    )
    assert packed.returncode == 0, packed.stderr
    [package] = json.loads(packed.stdout)
    files = sorted(entry["path"] for entry in package["files"])
    assert package["name"] == "memory-console-client"
    assert files == [
        "README.md",
        "dist/errors.d.ts",
        "dist/errors.js",
        "dist/index.d.ts",
        "dist/index.js",
        "dist/schema.d.ts",
        "dist/schema.js",
        "package.json",
    ]
    manifest = json.loads((PACKAGE / "package.json").read_text())
    assert "dependencies" not in manifest  # zero runtime dependencies
    assert manifest["type"] == "module"
