"""The agent API's request and response shapes (API.md), declared field by field.

Request bodies forbid unknown fields, so a `scope` sent to POST /memories is a 422 rather
than silently ignored. Free-text fields are checked here only for what the database cannot
store (NUL, unpaired surrogates) and for the column widths the services do not check
themselves; everything with a domain rule (refs, keys, facts, scopes) is left to the
service, whose messages name the rule and the limit (e.g. "fact is 241 characters; the
limit is 240 characters").
"""

from typing import Annotated, Literal

from ninja import Schema
from pydantic import AfterValidator, ConfigDict, Field


def storable(value: str) -> str:
    """PostgreSQL text cannot hold NUL, and UTF-8 cannot encode a lone surrogate."""
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("must be valid Unicode (it contains an unpaired surrogate)") from None
    return value


Text = Annotated[str, AfterValidator(storable)]
# run, thread and tool-call ids are the host's own; the columns holding them are 128 wide.
HostId = Annotated[str, Field(min_length=1, max_length=128), AfterValidator(storable)]
ActorRef = Annotated[
    Text,
    Field(
        description="The host's id for the person the agent works for (e.g. `u1`).",
        examples=["u1"],
    ),
]


class RequestBody(Schema):
    """Every request body: unknown fields are a 422, never silently dropped."""

    model_config = ConfigDict(extra="forbid")


# --- requests ---------------------------------------------------------------------------


class TurnIn(RequestBody):
    actor: ActorRef
    run_id: HostId = Field(description="One agent turn; a repeat returns the stored digest.")
    thread_id: HostId | None = None
    query: Text | None = Field(None, description="Recall by relevance to this text.")
    max_memories: int | None = Field(
        None, ge=0, description="Lowers the server's MEMORY_MAX_LINES for a turn, never raises it."
    )


class RememberIn(RequestBody):
    actor: ActorRef
    key: Text = Field(
        description="A slug: lowercase letters, digits, '.', '_' and '-', at most 64 characters.",
        examples=["fiscal-year"],
    )
    # No max_length here on purpose: the service's refusal names MEMORY_MAX_FACT_CHARS.
    fact: Text = Field(
        description="One line, at most MEMORY_MAX_FACT_CHARS (default 240) characters.",
        examples=["they report on the calendar year"],
    )
    run_id: HostId | None = None
    tool_call_id: HostId | None = Field(
        None, description="With run_id: a repeated call returns the stored record (200)."
    )
    thread_id: HostId | None = None


class ActorIn(RequestBody):
    display_name: Annotated[Text, Field(max_length=200)] | None = Field(
        None, description="null keeps the current name."
    )
    scopes: list[Text] = Field(
        max_length=32,
        description="Memberships, narrowest first, without actor:… and global.",
        examples=[["team:ops", "tenant:acme"]],
    )


class MessageIn(RequestBody):
    actor: ActorRef
    run_id: HostId | None = None
    role: Literal["user", "assistant", "tool"]
    text: Text


# --- responses --------------------------------------------------------------------------


class ErrorOut(Schema):
    detail: str


class OverrideOut(Schema):
    id: str
    scope: str
    text: str
    author: Literal["human", "agent"]


class AgentOriginOut(Schema):
    actor: str | None
    thread_id: str | None
    run_id: str | None
    tool_call_id: str | None
    resolves: bool = Field(description="False when the origin's conversation is no longer stored.")


class HumanOriginOut(Schema):
    user: str | None
    resolves: bool


class MemoryOut(Schema):
    id: str = Field(examples=["mem_01K3X8R6Q2W8N5V4T7Z9Y1B0CD"])
    key: str
    text: str
    scope: str
    pinned: bool
    tags: list[str]
    author: Literal["human", "agent"]
    origin: AgentOriginOut | HumanOriginOut
    created_at: str = Field(examples=["2026-09-01T09:12:44Z"])
    supersedes: str | None
    overrides: list[OverrideOut] = Field(
        description="The wider values of this key that this one beats, narrowest first."
    )


class LineOut(Schema):
    n: int
    text: str
    memory_id: str


class StatsOut(Schema):
    offered: int
    omitted: int
    pinned_omitted: int
    recalled: int
    prompt_chars: int
    partial: bool


class TurnOut(Schema):
    run_id: str
    actor: str
    scopes: list[str]
    block: str
    entries: list[MemoryOut]
    lines: list[LineOut]
    stats: StatsOut


class MemoryPageOut(Schema):
    items: list[MemoryOut]
    count: int = Field(description="Every applicable key, not only this page.")


class SearchOut(Schema):
    items: list[MemoryOut]
    tier: Literal["fts", "trigram", "like", "hybrid"]


class ActorOut(Schema):
    ref: str
    display_name: str
    scopes: list[str] = Field(description="The full chain, narrowest first.")


class MessageOut(Schema):
    id: str
    thread_id: str
    run_id: str | None
    role: Literal["user", "assistant", "tool"]
    created_at: str


class HealthOut(Schema):
    status: Literal["ok", "degraded"]
    database: Literal["ok", "unreachable"]


def errors(*statuses: int) -> dict[int, type[Schema]]:
    """Declared error responses of an operation: 401 always (every operation here needs a
    key), 503 always (the database may be unreachable), plus the ones it can refuse with
    (400 is a request body that is not JSON at all)."""
    return {status: ErrorOut for status in sorted({401, 503, *statuses})}
