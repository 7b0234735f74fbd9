"""End to end: the official `mcp` SDK's client (a real client none of us wrote) over
streamable HTTP, against `manage.py serve` (gunicorn workers, DEBUG off) on the test
database, in both protocol revisions: 2025-06-18 (`mode="legacy"`: the initialize
handshake; the client offers 2025-11-25 and takes the server's 2025-06-18) and 2026-07-28
(pinned, and `mode="auto"`, which probes server/discover first).

The client checks every structured result against the tool's output schema from
tools/list, so each successful call here also holds the server to its schemas. The data is
committed (`transactional_db`) so the server's workers see it; the server is started once
for the module and stopped before the test database is dropped.
"""

import asyncio
import concurrent.futures

import httpx2
import pytest
from django.conf import settings
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from memory_console.bench.database import server_url
from memory_console.loadgen.server import AppServer
from memory_core import writes
from memory_core.accounts import keys
from memory_core.db.privileges import OWNER_ALIAS
from memory_core.models import AccessLog, Actor, LedgerEvent, Memory, Message

# slow: a real server, and the SDK's client through every protocol revision.
pytestmark = pytest.mark.slow

MODES = {
    "2025-06-18": "legacy",
    "2026-07-28": "2026-07-28",
    "2026-07-28 (auto)": "auto",
}
TOOLS = [
    "memory_context",
    "remember",
    "search_memories",
    "get_memory",
    "invalidate_memory",
    "record_message",
]


@pytest.fixture(scope="module")
def server(django_db_setup, django_db_blocker, tmp_path_factory):
    name = settings.DATABASES["default"]["NAME"]
    with django_db_blocker.unblock():
        url, owner_url = server_url(name), server_url(name, OWNER_ALIAS)
    log = tmp_path_factory.mktemp("mcp-server") / "server.log"
    with AppServer(url, owner_url, log_path=log, workers=2) as app:
        yield app


def session(server, secret, path="/mcp/actors/u1/", mode="auto"):
    """An SDK client for `path`, with the key in the Authorization header."""

    class Session:
        async def __aenter__(self):
            headers = {"Authorization": f"Bearer {secret}"} if secret else {}
            self.http = httpx2.AsyncClient(headers=headers, timeout=30)
            await self.http.__aenter__()
            transport = streamable_http_client(
                f"http://127.0.0.1:{server.port}{path}", http_client=self.http
            )
            self.client = Client(transport, mode=mode, read_timeout_seconds=30)
            return await self.client.__aenter__()

        async def __aexit__(self, *exc):
            try:
                await self.client.__aexit__(*exc)
            finally:
                await self.http.__aexit__(*exc)

    return Session()


def run(coroutine):
    """The client's coroutine, in a thread of its own: the browser tests of the same session
    (Playwright's sync API) leave an event loop running in the main thread, where
    asyncio.run() refuses to start another."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


@pytest.fixture
def world(transactional_db, org, operator):
    """A tenant policy u1 sees (held wider: its agent may not invalidate it)."""
    policy = writes.publish(org.acme, "units", "report distances in kilometres", principal=operator)
    return policy


@pytest.mark.parametrize("revision", sorted(MODES))
def test_every_tool_through_the_official_client(server, org, world, revision):
    policy = world

    async def main():
        async with session(server, org.acme_secret, mode=MODES[revision]) as client:
            seen = {
                "version": client.protocol_version,
                "server": client.server_info.name if client.server_info else None,
                "instructions": client.instructions,
            }
            listing = await client.list_tools()
            seen["tools"] = {tool.name: tool for tool in listing.tools}
            remembered = await client.call_tool(
                "remember",
                {"key": "tone", "fact": "prefers short answers", "run_id": "r1"},
            )
            again = await client.call_tool(
                "remember", {"key": "tone", "fact": "prefers bullet points"}
            )
            context = await client.call_tool("memory_context", {"query": "answers", "run_id": "r2"})
            found = await client.call_tool("search_memories", {"query": "bullet", "limit": 5})
            one = await client.call_tool(
                "get_memory", {"memory_id": again.structured_content["id"]}
            )
            message = await client.call_tool(
                "record_message",
                {"thread_id": "thr_1", "role": "user", "text": "call me Sam", "run_id": "r2"},
            )
            invalidated = await client.call_tool(
                "invalidate_memory",
                {"memory_id": again.structured_content["id"], "reason": "Sam said otherwise"},
            )
            wider = await client.call_tool(
                "invalidate_memory", {"memory_id": policy.uid, "reason": "the user said so"}
            )
            gone = await client.call_tool(
                "get_memory", {"memory_id": again.structured_content["id"]}
            )
            bad = await client.call_tool("remember", {"key": "tone", "fact": "x" * 241})
            typed = await client.call_tool("search_memories", {"query": "x", "limit": "ten"})
            with pytest.raises(MCPError) as unknown:
                await client.call_tool("drop_tables", {})
            with pytest.raises(MCPError) as no_forget:
                await client.call_tool("forget_memory", {"memory_id": policy.uid})
            return seen, {
                "remembered": remembered,
                "again": again,
                "context": context,
                "found": found,
                "one": one,
                "message": message,
                "invalidated": invalidated,
                "wider": wider,
                "gone": gone,
                "bad": bad,
                "typed": typed,
                "unknown": unknown.value,
                "no_forget": no_forget.value,
            }

    seen, results = run(main())
    expected_version = "2025-06-18" if revision == "2025-06-18" else "2026-07-28"
    assert seen["version"] == expected_version
    # A client pinned to 2026-07-28 skips discovery, so learns the server's name only from
    # the results' _meta; the handshake and the probe name it at once.
    assert seen["server"] == (None if revision == "2026-07-28" else "memory-console")
    if revision != "2026-07-28":
        assert "memory_context" in seen["instructions"]
    assert list(seen["tools"]) == TOOLS
    for tool in seen["tools"].values():
        assert tool.output_schema["type"] == "object"
        assert "actor" not in tool.input_schema["properties"]

    remembered, again = results["remembered"], results["again"]
    assert not remembered.is_error and remembered.structured_content["scope"] == "actor:acme/u1"
    assert again.structured_content["supersedes"] == remembered.structured_content["id"]
    context = results["context"]
    assert "- [actor:acme/u1] tone: prefers bullet points" in context.structured_content["block"]
    assert context.content[0].text.startswith("<memory>")
    assert {line["memory_id"] for line in context.structured_content["lines"]} == {
        again.structured_content["id"],
        policy.uid,
    }
    assert results["found"].structured_content["items"][0]["key"] == "tone"
    assert results["one"].structured_content["text"] == "prefers bullet points"
    assert results["message"].structured_content["thread_id"] == "thr_1"
    invalidated = results["invalidated"].structured_content
    assert invalidated["memory_id"] == again.structured_content["id"]
    assert invalidated["scope"] == "actor:acme/u1"
    refusals = {
        name: (results[name].is_error, results[name].content[0].text)
        for name in ("wider", "gone", "bad", "typed")
    }
    assert refusals == {
        "wider": (
            True,
            "this memory is held at a wider scope; an administrator invalidates it in the console",
        ),
        "gone": (True, "memory not found"),
        "bad": (True, "fact is 241 characters; the limit is 240 characters"),
        "typed": (True, "limit: Input should be a valid integer"),
    }
    assert results["unknown"].code == -32602
    assert results["unknown"].error.message == "Unknown tool: 'drop_tables'"
    assert results["no_forget"].code == -32602
    assert results["no_forget"].error.message == "Unknown tool: 'forget_memory'"

    # What the server wrote, seen from the database: the API's rows, channel mcp.
    # Nothing erased: both versions kept, neither live.
    assert Memory.objects.filter(key="tone").count() == 2
    assert not Memory.objects.live().filter(key="tone").exists()
    assert Memory.objects.filter(uid=policy.uid, retired_at=None).exists()
    assert Message.objects.get(thread__ref="thr_1").text == "call me Sam"
    rows = AccessLog.objects.filter(principal=f"key:{org.acme_key.prefix}", channel="mcp")
    assert sorted({(r.action, r.outcome) for r in rows}) == [
        ("invalidate", 200),
        ("invalidate", 403),
        ("memory.get", 200),
        ("memory.get", 404),
        ("message", 201),
        ("remember", 201),
        ("remember", 422),
        ("search", 200),
        ("turn", 200),
    ]
    kinds = LedgerEvent.objects.filter(actor_ref="acme/u1", kind__startswith="memory.")
    assert sorted(kinds.values_list("kind", flat=True)) == [
        "memory.invalidated",
        "memory.remembered",
        "memory.remembered",
    ]


@pytest.mark.parametrize("revision", sorted(MODES))
def test_an_actor_outside_the_keys_reach_does_not_exist(server, org, world, revision):
    async def main():
        path = "/mcp/actors/globex/x9/"
        async with session(server, org.acme_secret, path, mode=MODES[revision]) as client:
            return [
                await client.call_tool("memory_context", {}),
                await client.call_tool("remember", {"key": "tone", "fact": "formal"}),
                await client.call_tool("search_memories", {"query": "units"}),
            ]

    for result in run(main()):
        assert result.is_error and result.content[0].text == "actor 'globex/x9' not found"
        assert result.structured_content is None
    assert not Memory.objects.filter(scope__token="actor:globex/x9").exists()
    rows = AccessLog.objects.filter(principal=f"key:{org.acme_key.prefix}", channel="mcp")
    assert [(r.action, r.outcome, r.actor_ref) for r in rows] == [
        ("actor.lookup", 404, "globex/x9")
    ] * 3


@pytest.mark.parametrize("revision", sorted(MODES))
def test_a_key_bound_to_an_actor_needs_no_actor_in_the_url(server, org, world, operator, revision):
    _, secret = keys.create_api_key("desk", org.acme, principal=operator, actor_ref="u2")

    async def main():
        async with session(server, secret, "/mcp/", mode=MODES[revision]) as client:
            own = await client.call_tool("memory_context", {})
        async with session(server, secret, "/mcp/actors/u1/", mode=MODES[revision]) as client:
            other = await client.call_tool("memory_context", {})
        return own, other

    own, other = run(main())
    assert own.structured_content["scopes"][0] == "actor:acme/u2"
    assert other.is_error and other.content[0].text == "actor 'u1' not found"


@pytest.mark.parametrize("secret", [None, "mc_not-a-key"])
@pytest.mark.parametrize("revision", sorted(MODES))
def test_without_a_live_key_the_client_is_refused(server, org, world, secret, revision):
    async def main():
        async with session(server, secret, mode=MODES[revision]) as client:
            await client.list_tools()

    with pytest.raises(BaseException) as refused:  # noqa: B017 - the SDK wraps it in a group
        run(main())
    assert "Unauthorized" in repr(refused.value) or "401" in repr(refused.value)
    assert not Actor.objects.filter(ref="acme/u9").exists()
    assert not AccessLog.objects.filter(channel="mcp").exists()
