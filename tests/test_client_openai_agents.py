"""The OpenAI Agents SDK adapter against a live server: the SDK's own MCP client lists the
server's tools and calls them, directly and as the agent's function tools (the path a
model's tool call takes), with no model involved.
"""

import asyncio
import concurrent.futures
import json

import pytest
from agents import Agent, RunContextWrapper
from agents.mcp import MCPServerStreamableHttp
from agents.tool_context import ToolContext

from memory_console_client.openai_agents import mcp_url, memory_mcp_server
from memory_core import writes
from memory_core.accounts import keys
from memory_core.models import AccessLog, Memory, Message

# slow: a live server for each test.
pytestmark = pytest.mark.slow

TOOLS = [
    "memory_context",
    "remember",
    "search_memories",
    "get_memory",
    "invalidate_memory",
    "record_message",
]


def run(coroutine):
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


@pytest.fixture
def policy(transactional_db, org, operator):
    return writes.publish(org.acme, "units", "report distances in kilometres", principal=operator)


@pytest.fixture
def bound_secret(org, operator):
    """A key bound to u1, as a desktop or a single-user agent holds."""
    _, secret = keys.create_api_key("u1's agent", org.acme, principal=operator, actor_ref="u1")
    return secret


def test_the_sdks_client_lists_and_calls_the_tools_at_mcp(live_server, org, policy, bound_secret):
    server = memory_mcp_server(live_server.url, bound_secret)
    assert isinstance(server, MCPServerStreamableHttp)
    assert server.params["url"] == f"{live_server.url}/mcp/"
    assert server.params["headers"] == {"Authorization": f"Bearer {bound_secret}"}

    async def main():
        async with server:
            tools = await server.list_tools()
            remembered = await server.call_tool(
                "remember", {"key": "tone", "fact": "prefers short answers", "run_id": "r1"}
            )
            context = await server.call_tool("memory_context", {"query": "answers"})
            found = await server.call_tool("search_memories", {"query": "short"})
            message = await server.call_tool(
                "record_message", {"thread_id": "t1", "role": "user", "text": "call me Sam"}
            )
            refused = await server.call_tool("remember", {"key": "tone", "fact": "x" * 241})
            return tools, remembered, context, found, message, refused

    tools, remembered, context, found, message, refused = run(main())
    assert [tool.name for tool in tools] == TOOLS
    assert all("actor" not in tool.input_schema["properties"] for tool in tools)
    written = remembered.structured_content
    assert not remembered.is_error and written["scope"] == "actor:acme/u1"
    block = context.structured_content["block"]
    assert "- [actor:acme/u1] tone: prefers short answers" in block
    assert "- [tenant:acme] units: report distances in kilometres" in block
    assert found.structured_content["items"][0]["id"] == written["id"]
    assert message.structured_content["thread_id"] == "t1"
    assert refused.is_error
    assert refused.content[0].text == "fact is 241 characters; the limit is 240 characters"

    assert Memory.objects.live().get(scope__token="actor:acme/u1", key="tone").uid == written["id"]
    assert Message.objects.get(thread__ref="t1").text == "call me Sam"
    rows = AccessLog.objects.filter(channel="mcp")
    assert {(row.action, row.outcome) for row in rows} == {
        ("remember", 201),
        ("remember", 422),
        ("turn", 200),
        ("search", 200),
        ("message", 201),
    }


def test_the_agents_function_tools_call_the_server(live_server, org, policy):
    """What the agent loop does with a model's tool call, without the model: the MCP tools
    become the agent's function tools, and invoking one calls the server."""
    server = memory_mcp_server(live_server.url, org.acme_secret, actor="u2")
    assert server.params["url"] == f"{live_server.url}/mcp/actors/u2/"

    async def main():
        async with server:
            agent = Agent(name="assistant", instructions="Be brief.", mcp_servers=[server])
            tools = {tool.name: tool for tool in await agent.get_all_tools(RunContextWrapper(None))}
            arguments = json.dumps({"key": "tone", "fact": "formal", "run_id": "r1"})
            context = ToolContext(
                None, tool_name="remember", tool_call_id="call-1", tool_arguments=arguments
            )
            output = await tools["remember"].on_invoke_tool(context, arguments)
            return sorted(tools), output

    names, output = run(main())
    assert names == sorted(TOOLS)
    assert "Remembered tone at actor:acme/u2" in str(output)
    memory = Memory.objects.live().get(scope__token="actor:acme/u2", key="tone")
    assert (memory.text, memory.author, memory.origin_run) == ("formal", "agent", "r1")


def test_an_unbound_key_at_mcp_names_no_actor_and_a_bad_key_is_refused(live_server, org):
    async def tools_of(server):
        async with server:
            return await server.call_tool("memory_context", {})

    result = run(tools_of(memory_mcp_server(live_server.url, org.acme_secret)))
    assert result.is_error and "names no actor" in result.content[0].text

    with pytest.raises(BaseException) as refused:  # noqa: B017 - the SDK wraps it in a group
        run(tools_of(memory_mcp_server(live_server.url, "mc_not-a-key")))
    assert "401" in repr(refused.value) or "Unauthorized" in repr(refused.value)
    assert not AccessLog.objects.filter(channel="mcp", outcome=200).exists()


def test_the_mcp_url_keeps_a_tenant_qualified_ref_whole():
    assert mcp_url("http://h:8000/") == "http://h:8000/mcp/"
    assert mcp_url("http://h:8000", "acme/u1") == "http://h:8000/mcp/actors/acme/u1/"
