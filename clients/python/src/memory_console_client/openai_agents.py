"""OpenAI Agents SDK adapter (`pip install "memory-console-client[openai-agents]"`).

    from agents import Agent
    from memory_console_client.openai_agents import memory_mcp_server

    async with memory_mcp_server("http://localhost:8000", "mc_…") as memory:
        agent = Agent(name="assistant", mcp_servers=[memory])

`memory_mcp_server` returns the SDK's own `MCPServerStreamableHttp`, pointed at the
server's MCP endpoint with the key: the agent gets the server's tools (`memory_context`,
`remember`, `search_memories`, `get_memory`, `invalidate_memory`, `record_message`) for the
person the connection names. At `/mcp/` that person is the one the key is bound to
(`create_api_key --actor u1`); with a key that is not bound, name the person with
`actor="u1"` (the endpoint `/mcp/actors/u1/`).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from agents.mcp import MCPServerStreamableHttp

__all__ = ["memory_mcp_server"]


def mcp_url(base_url: str, actor: str | None = None) -> str:
    """The MCP endpoint of the server at `base_url` (its root), for `actor` if named."""
    root = base_url.rstrip("/")
    if actor is None:
        return f"{root}/mcp/"
    return f"{root}/mcp/actors/{quote(actor, safe='/')}/"


def memory_mcp_server(
    base_url: str,
    api_key: str,
    *,
    actor: str | None = None,
    name: str = "memory",
    timeout: float = 10.0,
    cache_tools_list: bool = True,
    **options: Any,
) -> MCPServerStreamableHttp:
    """The Agents SDK's MCP server for Memory Console at `base_url` (the server's root).

    The tool list changes only with a deployment, so it is cached by default. Any other
    keyword goes to `MCPServerStreamableHttp` as it is (`tool_filter`,
    `require_approval`, …)."""
    return MCPServerStreamableHttp(
        params={
            "url": mcp_url(base_url, actor),
            "headers": {"Authorization": f"Bearer {api_key}"},
            "timeout": timeout,
        },
        name=name,
        cache_tools_list=cache_tools_list,
        client_session_timeout_seconds=timeout,
        **options,
    )
