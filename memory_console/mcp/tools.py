"""The six MCP tools: thin handlers over the services the REST API calls.

Each handler resolves the connection's actor (memory_console/mcp/connection.py), calls the
same service function as its REST twin, and returns the same body (its structured content,
described by the REST response schema as its output schema) and a short text for the model
(renderings.py). So the rules, the ledger events and the access-log rows are the API's;
only the access log's channel, `mcp`, tells the two apart. Refusals come out of the
services as DomainError and become tool errors with the API's messages (protocol.py).

| tool | REST twin |
|---|---|
| memory_context | POST /turns (without a run_id, a fresh one per call, returned) |
| remember | POST /memories |
| search_memories | GET /memories/search |
| get_memory | GET /memories/{id} |
| invalidate_memory | the console's invalidate, held to the actor's own scope |
| record_message | POST /threads/{thread_id}/messages |

There is no forget tool. Forgetting erases every version of a memory and scrubs the
prompts that showed it: it is the host's privacy act (DELETE /memories/{id}) or an
administrator's, never something a model should do because a message asked it to. A model
that learns a note is wrong invalidates it: it leaves the prompt, stays in the history, and
a person can reinstate it.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

from django.conf import settings
from pydantic import BaseModel

from memory_console.api.schemas import MemoryOut, MessageOut, RememberOut, SearchOut, TurnOut
from memory_console.mcp import renderings
from memory_console.mcp.arguments import (
    Arguments,
    ContextArguments,
    InvalidateArguments,
    MemoryIdArguments,
    MessageArguments,
    RememberArguments,
    SearchArguments,
    input_schema,
)
from memory_console.mcp.connection import Connection
from memory_core import actors, curation, transcripts, turns, visibility, writes
from memory_core.recall.search import search_memories as search_chain
from memory_core.rules.ids import new_id
from memory_core.shapes import timestamp


class InvalidatedOut(BaseModel):
    memory_id: str
    scope: str
    invalidated_at: str


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    arguments: type[Arguments]
    output: type[BaseModel]
    run: Callable[[Connection, Arguments], tuple[dict, str]]
    hints: dict = field(default_factory=dict)

    def definition(self) -> dict:
        schema = input_schema(self.arguments)
        if "fact" in schema["properties"]:
            # The limit is a setting; the model should see the number.
            schema["properties"]["fact"]["description"] = FACT_HELP.format(
                limit=settings.MEMORY_MAX_FACT_CHARS
            )
        output = self.output.model_json_schema(mode="serialization")
        output.pop("title", None)
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": schema,
            "outputSchema": output,
            "annotations": {"title": self.title, "openWorldHint": False, **self.hints},
        }


# --- handlers: one service call each, as the REST handlers ---------------------------------


def memory_context(connection: Connection, args: ContextArguments) -> tuple[dict, str]:
    actor = connection.actor(register=True)
    turn = turns.resolve_turn(
        actor,
        args.run_id or new_id("run"),
        principal=connection.principal,
        thread_id=args.thread_id,
        query=args.query,
        max_memories=args.max_memories,
    )
    body = turn.body()
    body["actor"] = connection.actor_ref  # as the connection names it, as the API echoes it
    return body, renderings.turn(body)


def remember(connection: Connection, args: RememberArguments) -> tuple[dict, str]:
    actor = connection.actor(register=True)
    chain = actors.chain_of(actor)
    written = writes.remember(
        actor,
        args.key,
        args.fact,
        principal=connection.principal,
        run_id=args.run_id,
        tool_call_id=args.tool_call_id,
        thread_id=args.thread_id,
        chain=chain,
    )
    shape = visibility.memory_shape_for_actor(written.memory, chain, written.wider)
    body = {**shape, "similar": written.similar}
    return body, renderings.remembered(body, written.created)


def search_memories(connection: Connection, args: SearchArguments) -> tuple[dict, str]:
    owner = connection.actor()
    items, tier = search_chain(owner, args.query, principal=connection.principal, limit=args.limit)
    body = {"items": items, "tier": tier}
    return body, renderings.found(body)


def get_memory(connection: Connection, args: MemoryIdArguments) -> tuple[dict, str]:
    owner = connection.actor()
    shape = visibility.read_memory(owner, args.memory_id, principal=connection.principal)
    return shape, renderings.memory(shape)


def invalidate_memory(connection: Connection, args: InvalidateArguments) -> tuple[dict, str]:
    owner = connection.actor()
    # The live version only, as get_memory: a replaced, invalidated or forgotten one, or one
    # outside the chain, is "not found" (and logged), whatever the model was told.
    memory = visibility.visible_memory(
        owner, args.memory_id, principal=connection.principal, action="invalidate", live_only=True
    )
    retired = curation.invalidate_for_actor(
        memory, owner, args.reason, principal=connection.principal
    )
    body = {
        "memory_id": retired.uid,
        "scope": retired.scope.token,
        "invalidated_at": timestamp(retired.retired_at),
    }
    return body, renderings.invalidated(body)


def record_message(connection: Connection, args: MessageArguments) -> tuple[dict, str]:
    actor = connection.actor(register=True)
    message = transcripts.record_message(
        actor,
        args.thread_id,
        args.role,
        args.text,
        principal=connection.principal,
        run_id=args.run_id,
    )
    body = {
        "id": message.uid,
        "thread_id": message.thread.ref,
        "run_id": message.run_id,
        "role": message.role,
        "created_at": timestamp(message.created_at),
    }
    return body, renderings.recorded(body)


# --- the catalogue: descriptions are written for the model ---------------------------------

FACT_HELP = (
    "The fact, written about the person, one line of at most {limit} characters "
    "(e.g. `prefers distances in kilometres`)."
)

TOOLS: dict[str, Tool] = {
    tool.name: tool
    for tool in [
        Tool(
            name="memory_context",
            title="What is on file about this person",
            description=(
                "Call this at the start of every turn, before you answer. It returns what is "
                "on file about the person you are working for: a <memory> block to read as "
                "context (instructions people wrote, then notes you or other agents made "
                "earlier, each marked with its scope; a narrower scope overrides a wider "
                "one), and the ids of the memories shown. Pass the person's latest message "
                "as `query`, so the most relevant notes are chosen when not all of them fit. "
                "Never treat a missing note as evidence that something was never said."
            ),
            arguments=ContextArguments,
            output=TurnOut,
            run=memory_context,
            hints={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True},
        ),
        Tool(
            name="remember",
            title="Remember a fact about this person",
            description=(
                "Save one short, durable fact about the person you are working for, so that "
                "later conversations know it: a preference, a standing circumstance, how "
                "they like to work (key `units`, fact `prefers distances in kilometres`). "
                "One fact per key. To correct or update a fact, remember the same key again: "
                "the new value replaces the old one (its history is kept), so never start a "
                "second key for the same thing. Do not save: a restatement or summary of the "
                "conversation, one-off requests, what holds only for the current task, "
                "guesses, secrets (passwords, card or account numbers), or what the memory "
                "block already says. The fact is saved for this person only. The result names "
                "any other key that already holds (nearly) the same fact: then keep one key "
                "for it (remember under that key, invalidate the new note)."
            ),
            arguments=RememberArguments,
            output=RememberOut,
            run=remember,
            hints={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False},
        ),
        Tool(
            name="search_memories",
            title="Search this person's memories",
            description=(
                "Look up what is on file about the person by words, when the block from "
                "memory_context does not show something you need (it holds a limited number "
                "of notes). Returns the best-matching notes, each as it applies to the person "
                "(the narrowest scope wins, wider values it overrides listed with it), plus "
                "every pinned note."
            ),
            arguments=SearchArguments,
            output=SearchOut,
            run=search_memories,
            hints={"readOnlyHint": True},
        ),
        Tool(
            name="get_memory",
            title="Read one memory",
            description=(
                "Read one memory by its id (as memory_context or search_memories gave it), "
                "with the wider values it overrides. A memory that was replaced, invalidated, "
                "forgotten, or is not about this person answers `memory not found`."
            ),
            arguments=MemoryIdArguments,
            output=MemoryOut,
            run=get_memory,
            hints={"readOnlyHint": True},
        ),
        Tool(
            name="invalidate_memory",
            title="Mark a memory as no longer true",
            description=(
                "Take a note about the person out of use, by its id, when you learn it is "
                "wrong or no longer holds and there is no new value to remember (to correct "
                "or update a note, remember the same key again instead). Say why in `reason`. "
                "From the next turn on the note is no longer in the memory block; it stays "
                "in its history, where a person can reinstate it. Only notes at the person's "
                "own scope can be invalidated here; one held for their team or organisation "
                "answers that an administrator invalidates it. Nothing is erased: if the "
                "person asks for what is known about them to be deleted, tell them that "
                "their host or an administrator does that."
            ),
            arguments=InvalidateArguments,
            output=InvalidatedOut,
            run=invalidate_memory,
            # Not additive (the note leaves the prompt), so destructive in the protocol's
            # sense, though a person can undo it; a second call changes nothing more.
            hints={"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True},
        ),
        Tool(
            name="record_message",
            title="Record a message of the conversation",
            description=(
                "Append one message to the conversation's transcript (its thread), so that "
                "an auditor can trace a memory back to the conversation that taught it. "
                "Hosts usually record their messages themselves; call this only when asked "
                "to keep the transcript. Returns the stored message's id."
            ),
            arguments=MessageArguments,
            output=MessageOut,
            run=record_message,
            hints={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False},
        ),
    ]
}


@cache
def _definitions(max_fact_chars: int) -> tuple[dict, ...]:
    return tuple(tool.definition() for tool in TOOLS.values())


def definitions() -> list[dict]:
    """Every tool's definition (tools/list), built once per MEMORY_MAX_FACT_CHARS (the fact's
    schema states the configured limit)."""
    return list(_definitions(settings.MEMORY_MAX_FACT_CHARS))
