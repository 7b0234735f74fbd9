"""OpenAI Agents SDK: the server's MCP tools for an agent that works for the user u1."""

import asyncio
import os

from agents import Agent

from memory_console_client.openai_agents import memory_mcp_server


async def main() -> None:
    async with memory_mcp_server(
        os.environ["MEMORY_CONSOLE_URL"], os.environ["MEMORY_CONSOLE_KEY"], actor="u1"
    ) as memory:
        agent = Agent(
            name="assistant",
            instructions="Call memory_context at the start of every turn.",
            mcp_servers=[memory],
        )
        # The tools the model will be offered, straight from the server.
        print([tool.name for tool in await memory.list_tools()])
        # What memory_context gives the model (Runner.run(agent, ...) calls it for you).
        context = await memory.call_tool("memory_context", {"query": "meetings"})
        print(context.content[0].text)
        print(agent.name, "is ready")


asyncio.run(main())
