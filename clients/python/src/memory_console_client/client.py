"""Client and AsyncClient: one method per API operation, the same methods in both.

    with Client("http://localhost:8000", "mc_…") as memory:
        turn = memory.turn("u1", "run-1", query="budget")

`base_url` is the server's root; the client adds `/api/v1`. Arguments carry the API's
field names; an optional argument left as None is not sent. Results are the dataclasses of
`memory_console_client.models`; errors raise the classes of `memory_console_client.errors`.

A connection failure, a timeout or a 5xx is retried (up to `retries` more times, waiting
0.25 s, 0.5 s, … or what a 503's Retry-After asks, at most 10 s) only for a call that is
safe to repeat (see `operations`); any other call raises at once.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Iterable
from typing import Any

import httpx

from memory_console_client import models, operations
from memory_console_client.errors import ConnectionFailed, error_for
from memory_console_client.models import decode
from memory_console_client.operations import Call

__all__ = ["AsyncClient", "Client"]

API_PATH = "/api/v1"
FIRST_WAIT = 0.25
LONGEST_WAIT = 10.0
USER_AGENT = "memory-console-client-python"


def _api_base(base_url: str) -> str:
    return base_url.rstrip("/") + API_PATH


def _headers(api_key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}", "User-Agent": USER_AGENT}


def _result(call: Call, response: httpx.Response) -> Any:
    if response.is_success:
        result = call.operation.result
        return None if result is None else decode(result, response.json())
    raise error_for(response.status_code, _detail(response))


def _detail(response: httpx.Response) -> Any:
    try:
        body = response.json()
    except ValueError:
        return response.text or response.reason_phrase
    return body.get("detail", body) if isinstance(body, dict) else body


def _wait(attempt: int, response: httpx.Response | None) -> float:
    """How long to wait before retry number `attempt` (0-based)."""
    wait = FIRST_WAIT * 2**attempt
    if response is not None:
        try:
            wait = max(wait, float(response.headers.get("Retry-After", "")))
        except ValueError:
            pass
    return min(wait, LONGEST_WAIT)


def _retry(call: Call, attempt: int, retries: int, response: httpx.Response | None) -> bool:
    failed = response is None or response.status_code >= 500
    return failed and call.repeatable and attempt < retries


class Client:
    """The synchronous client. Close it (or use it as a context manager) when done."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = 10.0,
        retries: int = 2,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.retries = retries
        self._http = httpx.Client(
            base_url=_api_base(base_url),
            headers=_headers(api_key),
            timeout=timeout,
            transport=transport,
        )

    def _send(self, call: Call) -> Any:
        for attempt in itertools.count():
            try:
                response = self._http.request(
                    call.operation.method, call.path, params=call.params, json=call.body
                )
            except httpx.TransportError as failure:
                if not _retry(call, attempt, self.retries, None):
                    raise ConnectionFailed(None, str(failure) or repr(failure)) from failure
                time.sleep(_wait(attempt, None))
                continue
            if not _retry(call, attempt, self.retries, response):
                return _result(call, response)
            time.sleep(_wait(attempt, response))

    def turn(
        self,
        actor: str,
        run_id: str,
        *,
        query: str | None = None,
        max_memories: int | None = None,
        thread_id: str | None = None,
    ) -> models.Turn:
        """What the agent is given at the start of a turn (`.block` goes into the prompt).
        The same (actor, run_id) again returns the stored answer unchanged."""
        return self._send(
            operations.turn(
                actor, run_id, query=query, max_memories=max_memories, thread_id=thread_id
            )
        )

    def remember(
        self,
        actor: str,
        key: str,
        fact: str,
        *,
        run_id: str | None = None,
        tool_call_id: str | None = None,
        thread_id: str | None = None,
    ) -> models.Remembered:
        """Remember a fact about the actor, at the actor's own scope; it replaces the live
        memory under the same key (`.supersedes`). With run_id and tool_call_id, a repeat
        returns the stored record."""
        return self._send(
            operations.remember(
                actor, key, fact, run_id=run_id, tool_call_id=tool_call_id, thread_id=thread_id
            )
        )

    def list_memories(
        self,
        actor: str,
        *,
        thread_id: str | None = None,
        limit: int | None = None,
        offset: int | None = None,
    ) -> models.MemoryPage:
        """Every key that applies to the actor, precedence-resolved (one page of it)."""
        return self._send(
            operations.list_memories(actor, thread_id=thread_id, limit=limit, offset=offset)
        )

    def get_memory(self, memory_id: str, actor: str) -> models.Memory:
        """One memory, if it is live and in the actor's chain (else NotFound)."""
        return self._send(operations.get_memory(memory_id, actor))

    def search(self, actor: str, q: str, *, limit: int | None = None) -> models.SearchResult:
        """The best keys for `q` in the actor's chain, plus every pinned key."""
        return self._send(operations.search(actor, q, limit=limit))

    def forget(self, memory_id: str, actor: str) -> None:
        """Erase a memory held at the actor's own scope, every version of it (Forbidden
        when it is held wider, NotFound when the actor cannot see it)."""
        return self._send(operations.forget(memory_id, actor))

    def put_actor(
        self, ref: str, scopes: Iterable[str], *, display_name: str | None = None
    ) -> models.Actor:
        """Create or update an actor's memberships, narrowest first."""
        return self._send(operations.put_actor(ref, scopes, display_name=display_name))

    def get_actor(self, ref: str) -> models.Actor:
        """An actor and its chain."""
        return self._send(operations.get_actor(ref))

    def record_message(
        self, thread_id: str, actor: str, role: str, text: str, *, run_id: str | None = None
    ) -> models.Message:
        """Append a message (role user, assistant or tool) to a thread's transcript."""
        return self._send(operations.record_message(thread_id, actor, role, text, run_id=run_id))

    def extract(self, thread_id: str, actor: str) -> models.Extraction:
        """Have the server's extractor read the thread's new messages and remember what it
        finds (a MemoryConsoleError with status 409 when extraction is off)."""
        return self._send(operations.extract(thread_id, actor))

    def health(self) -> models.Health:
        """Is the server up, and can it reach its database? (needs no key)"""
        return self._send(operations.health())

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AsyncClient:
    """The asynchronous client: the same methods as Client, each awaited."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = 10.0,
        retries: int = 2,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.retries = retries
        self._http = httpx.AsyncClient(
            base_url=_api_base(base_url),
            headers=_headers(api_key),
            timeout=timeout,
            transport=transport,
        )

    async def _send(self, call: Call) -> Any:
        for attempt in itertools.count():
            try:
                response = await self._http.request(
                    call.operation.method, call.path, params=call.params, json=call.body
                )
            except httpx.TransportError as failure:
                if not _retry(call, attempt, self.retries, None):
                    raise ConnectionFailed(None, str(failure) or repr(failure)) from failure
                await asyncio.sleep(_wait(attempt, None))
                continue
            if not _retry(call, attempt, self.retries, response):
                return _result(call, response)
            await asyncio.sleep(_wait(attempt, response))

    async def turn(
        self,
        actor: str,
        run_id: str,
        *,
        query: str | None = None,
        max_memories: int | None = None,
        thread_id: str | None = None,
    ) -> models.Turn:
        """What the agent is given at the start of a turn (`.block` goes into the prompt).
        The same (actor, run_id) again returns the stored answer unchanged."""
        return await self._send(
            operations.turn(
                actor, run_id, query=query, max_memories=max_memories, thread_id=thread_id
            )
        )

    async def remember(
        self,
        actor: str,
        key: str,
        fact: str,
        *,
        run_id: str | None = None,
        tool_call_id: str | None = None,
        thread_id: str | None = None,
    ) -> models.Remembered:
        """Remember a fact about the actor, at the actor's own scope; it replaces the live
        memory under the same key (`.supersedes`). With run_id and tool_call_id, a repeat
        returns the stored record."""
        return await self._send(
            operations.remember(
                actor, key, fact, run_id=run_id, tool_call_id=tool_call_id, thread_id=thread_id
            )
        )

    async def list_memories(
        self,
        actor: str,
        *,
        thread_id: str | None = None,
        limit: int | None = None,
        offset: int | None = None,
    ) -> models.MemoryPage:
        """Every key that applies to the actor, precedence-resolved (one page of it)."""
        return await self._send(
            operations.list_memories(actor, thread_id=thread_id, limit=limit, offset=offset)
        )

    async def get_memory(self, memory_id: str, actor: str) -> models.Memory:
        """One memory, if it is live and in the actor's chain (else NotFound)."""
        return await self._send(operations.get_memory(memory_id, actor))

    async def search(self, actor: str, q: str, *, limit: int | None = None) -> models.SearchResult:
        """The best keys for `q` in the actor's chain, plus every pinned key."""
        return await self._send(operations.search(actor, q, limit=limit))

    async def forget(self, memory_id: str, actor: str) -> None:
        """Erase a memory held at the actor's own scope, every version of it (Forbidden
        when it is held wider, NotFound when the actor cannot see it)."""
        return await self._send(operations.forget(memory_id, actor))

    async def put_actor(
        self, ref: str, scopes: Iterable[str], *, display_name: str | None = None
    ) -> models.Actor:
        """Create or update an actor's memberships, narrowest first."""
        return await self._send(operations.put_actor(ref, scopes, display_name=display_name))

    async def get_actor(self, ref: str) -> models.Actor:
        """An actor and its chain."""
        return await self._send(operations.get_actor(ref))

    async def record_message(
        self, thread_id: str, actor: str, role: str, text: str, *, run_id: str | None = None
    ) -> models.Message:
        """Append a message (role user, assistant or tool) to a thread's transcript."""
        return await self._send(
            operations.record_message(thread_id, actor, role, text, run_id=run_id)
        )

    async def extract(self, thread_id: str, actor: str) -> models.Extraction:
        """Have the server's extractor read the thread's new messages and remember what it
        finds (a MemoryConsoleError with status 409 when extraction is off)."""
        return await self._send(operations.extract(thread_id, actor))

    async def health(self) -> models.Health:
        """Is the server up, and can it reach its database? (needs no key)"""
        return await self._send(operations.health())

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
