"""The agent API's request and response shapes (docs/agents/api.md), declared field by field.

Request bodies forbid unknown fields, so a `scope` sent to POST /memories is a 422 rather
than silently ignored. Every field's schema states exactly what the server takes: lengths,
patterns and ranges (memory_console/api/patterns.py), so a generated client never sends a
request the schema allows and the server refuses. Where a field has a domain rule (refs,
keys, facts, scopes) the schema only *states* it and the service enforces it, because the
service's refusal names the rule and the limit ("fact is 241 characters; the limit is 240
characters") and is access-logged; what has no service of its own to check it (what the
database cannot store, the columns' widths, the ids' characters, integer ranges) is
enforced here.
"""

from typing import Annotated, Literal

from django.conf import settings
from ninja import Schema
from pydantic import AfterValidator, BeforeValidator, ConfigDict, Field
from pydantic.fields import FieldInfo

from memory_console.api import patterns
from memory_core.recall.search import MAX_QUERY_CHARS
from memory_core.rules.inputs import HOST_ID_MAX, bad_host_id_char
from memory_core.rules.scopes import KEY_MAX_CHARS, REF_MAX_CHARS, SCOPE_MAX_CHARS
from memory_core.transcripts import MAX_MESSAGE_CHARS

MAX_MEMBERSHIPS = 32
DISPLAY_NAME_MAX = 200


def storable(value: str) -> str:
    """PostgreSQL text cannot hold NUL, and UTF-8 cannot encode a lone surrogate."""
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("must be valid Unicode (it contains an unpaired surrogate)") from None
    return value


def printable_id(value: str) -> str:
    """The rule of inputs.host_id_problem, for every id the host names (a read filter too)."""
    bad = bad_host_id_char(value)
    if bad:
        raise ValueError(
            f"must not contain control, line-separator or bidirectional formatting "
            f"characters ({bad})"
        )
    return value


def json_integer(value: object) -> int:
    """JSON Schema's integer: 3 and 3.0, never `true` or "3" (pydantic's lax int takes
    both, so `false` was a budget of 0)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        suffix = ", got a number with a fractional part" if isinstance(value, float) else ""
        raise ValueError(f"Input should be a valid integer{suffix}")
    return value


def stated(**keywords) -> FieldInfo:
    """What the OpenAPI document says of a field whose rule a service enforces."""
    return Field(json_schema_extra=keywords)


def _fact_schema(schema: dict) -> None:
    # Read when the document is built, so it follows the configured limit.
    schema.update(pattern=patterns.FACT, minLength=1, maxLength=settings.MEMORY_MAX_FACT_CHARS)


# Free text, multi-line by nature (a display name; a message and a query below).
Text = Annotated[str, AfterValidator(storable), stated(pattern=patterns.TEXT)]
# run, thread and tool-call ids are the host's own; the columns holding them are 128 wide.
HostId = Annotated[
    str,
    Field(min_length=1, max_length=HOST_ID_MAX, json_schema_extra={"pattern": patterns.HOST_ID}),
    AfterValidator(printable_id),
]
# The pattern is the service's to enforce (its refusal explains a ref); the length is the
# width of the columns that hold a ref, the access log's among them.
ActorRef = Annotated[
    str,
    Field(
        max_length=REF_MAX_CHARS,
        description=(
            "The host's id for the person the agent works for: `u1`, or tenant-qualified "
            "`acme/u1` (a key whose reach lies in tenant acme reads `u1` as `acme/u1`)."
        ),
        examples=["u1"],
        json_schema_extra={"pattern": patterns.REF},
    ),
    AfterValidator(storable),
]
# A memory's key and fact, as remember takes them (POST /memories and MCP's remember).
MemoryKey = Annotated[
    str,
    AfterValidator(storable),
    Field(
        description="A slug: lowercase letters, digits, '.', '_' and '-', at most 64 characters.",
        examples=["fiscal-year"],
        json_schema_extra={"pattern": patterns.KEY, "maxLength": KEY_MAX_CHARS},
    ),
]
# Stated, not enforced here: the service's refusal names MEMORY_MAX_FACT_CHARS.
Fact = Annotated[
    str,
    AfterValidator(storable),
    Field(
        description="One line, at most MEMORY_MAX_FACT_CHARS (default 240) characters.",
        examples=["they report on the calendar year"],
        json_schema_extra=_fact_schema,
    ),
]
# At least 1: a budget of 0 would leave out every pinned memory, and say so as an alert.
Budget = Annotated[int, Field(ge=1), BeforeValidator(json_integer)]
MessageRole = Literal["user", "assistant", "tool"]
MessageText = Annotated[
    str, AfterValidator(storable), stated(pattern=patterns.TEXT, maxLength=MAX_MESSAGE_CHARS)
]
QueryText = Annotated[
    str, AfterValidator(storable), stated(pattern=patterns.TEXT, maxLength=MAX_QUERY_CHARS)
]
SearchQuery = Annotated[
    str,
    AfterValidator(storable),
    stated(pattern=patterns.SEARCH, minLength=1, maxLength=MAX_QUERY_CHARS),
]
MembershipToken = Annotated[
    str,
    AfterValidator(storable),
    stated(pattern=patterns.MEMBERSHIP, maxLength=SCOPE_MAX_CHARS),
]


class RequestBody(Schema):
    """Every request body: unknown fields are a 422, never silently dropped."""

    model_config = ConfigDict(extra="forbid")


# --- requests ---------------------------------------------------------------------------


class TurnIn(RequestBody):
    actor: ActorRef
    run_id: HostId = Field(description="One agent turn; a repeat returns the stored digest.")
    thread_id: HostId | None = None
    query: QueryText | None = Field(None, description="Recall by relevance to this text.")
    max_memories: Budget | None = Field(
        None, description="Lowers the server's MEMORY_MAX_LINES for a turn, never raises it."
    )


class RememberIn(RequestBody):
    actor: ActorRef
    key: MemoryKey
    fact: Fact
    run_id: HostId | None = None
    tool_call_id: HostId | None = Field(
        None, description="With run_id: a repeated call returns the stored record (200)."
    )
    thread_id: HostId | None = None


class ActorIn(RequestBody):
    display_name: Annotated[Text, Field(max_length=DISPLAY_NAME_MAX)] | None = Field(
        None, description="null keeps the current name."
    )
    scopes: list[MembershipToken] = Field(
        max_length=MAX_MEMBERSHIPS,
        description=(
            "Memberships, narrowest first, without actor:… and global, each listed once; "
            "`team:ops` names the key's tenant's team (`team:acme/ops`)."
        ),
        examples=[["team:ops", "tenant:acme"]],
        json_schema_extra={"uniqueItems": True},
    )


class MessageIn(RequestBody):
    actor: ActorRef
    run_id: HostId | None = None
    role: MessageRole
    text: MessageText


class ExtractIn(RequestBody):
    actor: ActorRef


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


class SimilarOut(Schema):
    id: str
    key: str
    scope: str


class RememberOut(MemoryOut):
    similar: list[SimilarOut] = Field(
        description=(
            "Live memories of the same actor under other keys that hold (nearly) the same "
            "fact, the closest first: correct one of those keys rather than keep two."
        )
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


class ExtractOut(Schema):
    written: list[MemoryOut] = Field(
        description="The memory versions this extraction wrote (at actor:<actor>, authored agent)."
    )
    unchanged: int = Field(description="Items whose key already held exactly that fact.")
    dropped: int = Field(
        description="Items not written: malformed, breaking the key or fact rules, holding a "
        "credential, a key listed twice, or past MEMORY_EXTRACT_MAX."
    )
    watermark: str | None = Field(
        description="The last message read (a message id), so far; null when none was."
    )


class HealthOut(Schema):
    status: Literal["ok", "degraded"]
    database: Literal["ok", "unreachable"]


def errors(*statuses: int) -> dict[int, type[Schema]]:
    """Declared error responses of an operation: 401 always (every operation here needs a
    key), 503 always (the database may be unreachable), plus the ones it can refuse with
    (a request body that is not JSON at all is a 422, as any other malformed body)."""
    return {status: ErrorOut for status in sorted({401, 503, *statuses})}
