"""Every example of docs/agents/clients.md, run against a live server.

The page includes the files of docs/examples/ (pymdownx.snippets), so what is shown is what
runs here: the Python examples as programs of their own, the key command through the
command it names, and the desktop assistants' configurations parsed and then used, by the
official MCP SDK's client, with the URL and the Authorization header they hold. The
TypeScript example runs in tests/test_client_typescript.py, beside the other Node tests.
"""

import asyncio
import concurrent.futures
import io
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from string import Template
from urllib.parse import urlsplit

import httpx2
import pytest
from django.core.management import call_command
from mcp import Client as McpClient
from mcp.client.streamable_http import streamable_http_client

from memory_core import writes
from memory_core.models import AccessLog, ApiKey, Memory

# slow: a live server, and each example a Python process of its own.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "docs" / "examples"
PAGE = ROOT / "docs" / "agents" / "clients.md"
CLIENT_SOURCE = ROOT / "clients" / "python" / "src"
PLACEHOLDER = "mc_…"
# The example files, by the test that runs each.
RUN_HERE = {
    "python_quickstart.py",
    "langgraph_agent.py",
    "openai_agents_tools.py",
    "desktop_key.sh",
    "claude_desktop_config.json",
    "cursor_mcp.json",
}
RUN_WITH_NODE = {"typescript_quickstart.mjs"}


def run(coroutine):
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def run_example(name: str, live_server, secret: str) -> str:
    env = {
        **os.environ,
        "MEMORY_CONSOLE_URL": live_server.url,
        "MEMORY_CONSOLE_KEY": secret,
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(CLIENT_SOURCE), os.environ.get("PYTHONPATH")])
        ),
    }
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


@pytest.fixture
def policy(transactional_db, org, operator):
    return writes.publish(org.acme, "units", "report distances in kilometres", principal=operator)


def test_every_example_file_is_on_the_page_and_run_by_a_test():
    files = {path.name for path in EXAMPLES.iterdir() if path.is_file()}
    assert files == RUN_HERE | RUN_WITH_NODE
    included = set(re.findall(r'^--8<-- "([^"]+)"$', PAGE.read_text(), flags=re.MULTILINE))
    assert included == files


def test_the_python_quickstart(live_server, org, policy):
    output = run_example("python_quickstart.py", live_server, org.acme_secret)
    lines = output.splitlines()
    assert lines[0] == "<memory>"
    assert "- [tenant:acme] units: report distances in kilometres" in lines
    assert re.search(r"^remembered meeting-hours at actor:acme/u1 \(mem_\w+\)$", output, re.M)
    assert "   actor:acme/u1  meeting-hours: prefers meetings before noon" in lines
    assert "['meeting-hours']" in lines
    assert lines[-1] == "404 memory not found"
    # Remembered, then forgotten: nothing of it is left; the policy is untouched.
    assert not Memory.objects.filter(key="meeting-hours").exists()
    assert Memory.objects.live().filter(uid=policy.uid).exists()
    rows = AccessLog.objects.filter(channel="api", actor_ref="acme/u1")
    assert {("turn", 200), ("remember", 201), ("forget", 204), ("memory.get", 404)} <= {
        (row.action, row.outcome) for row in rows
    }


def test_the_langgraph_example(live_server, org, policy):
    output = run_example("langgraph_agent.py", live_server, org.acme_secret)
    assert output.startswith("You are a helpful assistant.\n\n<memory>\n")
    assert "- [actor:acme/u1] meeting-hours: prefers meetings before noon\n" in output
    assert "prefers meetings before noon actor:acme/u1\n" in output
    assert "1.0 meeting-hours\n" in output
    memory = Memory.objects.live().get(scope__token="actor:acme/u1", key="meeting-hours")
    assert memory.author == "agent"


def test_the_openai_agents_example(live_server, org, policy):
    output = run_example("openai_agents_tools.py", live_server, org.acme_secret)
    lines = output.splitlines()
    assert lines[0] == str(
        [
            "memory_context",
            "remember",
            "search_memories",
            "get_memory",
            "invalidate_memory",
            "record_message",
        ]
    )
    assert "<memory>" in lines
    assert "- [tenant:acme] units: report distances in kilometres" in lines
    assert lines[-1] == "assistant is ready"
    assert AccessLog.objects.filter(channel="mcp", action="turn", actor_ref="acme/u1").exists()


def desktop_key(org) -> str:
    """Run docs/examples/desktop_key.sh through the command it names; the secret."""
    argv = shlex.split((EXAMPLES / "desktop_key.sh").read_text())
    assert argv[:3] == ["python", "manage.py", "create_api_key"]
    out = io.StringIO()
    call_command(*argv[2:], stdout=out)
    secret = out.getvalue().strip().splitlines()[-1]
    key = ApiKey.objects.get(name="u1's desktop")
    assert secret.startswith(f"mc_{key.prefix}")
    assert key.reach == org.acme and key.actor.ref == "acme/u1"
    return secret


def claude_desktop(config: dict) -> tuple[str, dict]:
    """The URL and headers `npx mcp-remote URL --header NAME:VALUE` connects with."""
    server = config["mcpServers"]["memory"]
    assert server["command"] == "npx"
    args = server["args"]
    assert "mcp-remote" in args
    [url] = [arg for arg in args if arg.startswith("http")]
    headers = {}
    for index, arg in enumerate(args):
        if arg == "--header":
            # mcp-remote expands ${VAR} from the environment the config gives it.
            name, _, value = Template(args[index + 1]).substitute(server["env"]).partition(":")
            headers[name.strip()] = value.strip()
    return url, headers


def cursor(config: dict) -> tuple[str, dict]:
    server = config["mcpServers"]["memory"]
    return server["url"], server["headers"]


@pytest.mark.parametrize(
    "name, read", [("claude_desktop_config.json", claude_desktop), ("cursor_mcp.json", cursor)]
)
def test_a_desktop_configuration_reaches_the_keys_actor_at_mcp(
    live_server, org, policy, name, read
):
    url, headers = read(json.loads((EXAMPLES / name).read_text()))
    assert urlsplit(url).path == "/mcp/"
    assert headers == {"Authorization": f"Bearer {PLACEHOLDER}"}

    secret = desktop_key(org)
    live = urlsplit(live_server.url)
    url = urlsplit(url)._replace(netloc=live.netloc).geturl()
    headers = {"Authorization": headers["Authorization"].replace(PLACEHOLDER, secret)}

    async def main():
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            transport = streamable_http_client(url, http_client=http)
            async with McpClient(transport, mode="auto", read_timeout_seconds=30) as client:
                tools = await client.list_tools()
                context = await client.call_tool("memory_context", {"query": "units"})
                return [tool.name for tool in tools.tools], context

    tools, context = run(main())
    assert "memory_context" in tools and "forget" not in " ".join(tools)
    assert not context.is_error
    assert context.structured_content["scopes"][0] == "actor:acme/u1"
    assert "- [tenant:acme] units: report distances in kilometres" in context.content[0].text
