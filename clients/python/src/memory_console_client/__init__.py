"""Python client for Memory Console's agent API.

    from memory_console_client import Client

    with Client("http://localhost:8000", "mc_…") as memory:
        block = memory.turn("u1", "run-1", query="budget").block

Adapters, installed as extras: `memory_console_client.langgraph` (a LangGraph store and
the turn's block for a system prompt) and `memory_console_client.openai_agents` (the
server's MCP tools for the OpenAI Agents SDK).
"""

from memory_console_client.client import AsyncClient, Client
from memory_console_client.errors import (
    ConnectionFailed,
    Forbidden,
    Gone,
    MemoryConsoleError,
    NotFound,
    RateLimited,
    ServerError,
    Unauthorized,
    ValidationError,
)
from memory_console_client.models import (
    Actor,
    AgentOrigin,
    Extraction,
    Health,
    HumanOrigin,
    Line,
    Memory,
    MemoryPage,
    Message,
    Override,
    Remembered,
    SearchResult,
    Similar,
    Stats,
    Turn,
)

__version__ = "0.1.0"

__all__ = [
    "Actor",
    "AgentOrigin",
    "AsyncClient",
    "Client",
    "ConnectionFailed",
    "Extraction",
    "Forbidden",
    "Gone",
    "Health",
    "HumanOrigin",
    "Line",
    "Memory",
    "MemoryConsoleError",
    "MemoryPage",
    "Message",
    "NotFound",
    "Override",
    "RateLimited",
    "Remembered",
    "SearchResult",
    "ServerError",
    "Similar",
    "Stats",
    "Turn",
    "Unauthorized",
    "ValidationError",
]
