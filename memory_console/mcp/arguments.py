"""What each MCP tool takes: the agent API's own field types (memory_console/api/schemas.py),
so the input schemas state the same lengths, patterns and ranges as the OpenAPI document,
and the services enforce the rules and word the refusals, as for the API.

No tool takes an actor, a scope or a key's reach: whose memories a call reads and writes is
fixed by the connection (the URL or a key bound to one actor), never by the model. Unknown
arguments are refused (`unknown field: actor`), never silently dropped.
"""

from typing import Annotated

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
)

from memory_console.api.schemas import (
    Budget,
    Fact,
    HostId,
    MemoryKey,
    MessageRole,
    MessageText,
    QueryText,
    SearchQuery,
    json_integer,
    stated,
    storable,
)
from memory_core.curation import MAX_REASON_CHARS
from memory_core.visibility import MEMORY_ID_RE

# Stated, not enforced: anything else is the service's "memory not found" (and logged), as
# for GET /memories/{id}.
MemoryId = Annotated[
    str,
    stated(pattern=f"^{MEMORY_ID_RE.pattern}$", examples=["mem_01K3X8R6Q2W8N5V4T7Z9Y1B0CD"]),
]
# Stated, not enforced: the service refuses an empty or multi-line reason in its own words,
# as it does a person's (curation.checked_reason).
Reason = Annotated[str, AfterValidator(storable), stated(minLength=1, maxLength=MAX_REASON_CHARS)]
SearchLimit = Annotated[int, Field(ge=1, le=100), BeforeValidator(json_integer)]

RUN_ID = (
    "Your current run (agent turn), as memory_context returned it; with tool_call_id, a "
    "repeated call returns the stored result instead of writing again."
)


class Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ContextArguments(Arguments):
    query: QueryText | None = Field(
        None,
        description=(
            "What the person just asked, in their words: memories relevant to it are "
            "preferred when not everything fits."
        ),
    )
    run_id: HostId | None = Field(
        None,
        description=(
            "Your run id, if your host gave you one: the same run id returns the same block "
            "again. Leave it out to start a new run (its id is returned)."
        ),
    )
    thread_id: HostId | None = Field(None, description="The conversation's id, if known.")
    max_memories: Budget | None = Field(
        None, description="Show at most this many memories (the server's limit still applies)."
    )


class RememberArguments(Arguments):
    key: MemoryKey = Field(
        description=(
            "What the fact is about, as a short slug: lowercase letters, digits, '.', '_' "
            "and '-', at most 64 characters (`units`, `diet`, `fiscal-year`). Remembering "
            "the same key again replaces the earlier fact."
        )
    )
    fact: Fact  # its description states the configured limit (tools.FACT_HELP)
    run_id: HostId | None = Field(None, description=RUN_ID)
    tool_call_id: HostId | None = Field(None, description="This tool call's id, if you know it.")
    thread_id: HostId | None = Field(None, description="The conversation's id, if known.")


class SearchArguments(Arguments):
    query: SearchQuery = Field(description="Words to look for (a typo is forgiven).")
    limit: SearchLimit = Field(10, description="At most this many keys (1-100).")


class MemoryIdArguments(Arguments):
    memory_id: MemoryId = Field(description="A memory id, `mem_…`, as another tool returned it.")


class InvalidateArguments(MemoryIdArguments):
    reason: Reason = Field(
        description=(
            f"Why the note is wrong or no longer holds, in one line of at most "
            f"{MAX_REASON_CHARS} characters (`they moved to Lisbon in May`). A person reviewing "
            "the note's history reads it."
        )
    )


class MessageArguments(Arguments):
    thread_id: HostId = Field(description="The conversation this message belongs to.")
    role: MessageRole = Field(description="Who said it.")
    text: MessageText = Field(description="The message, as it was said.")
    run_id: HostId | None = Field(None, description=RUN_ID.split(";")[0] + ".")


def input_schema(arguments: type[Arguments]) -> dict:
    schema = arguments.model_json_schema()
    schema.pop("title", None)
    return schema


def describe(error: ValidationError, most: int = 5) -> str:
    """pydantic's problems as one readable sentence each, worded as the API words them
    (`unknown field: actor`, `limit: Input should be less than or equal to 100`). The first
    few only, and field names cut short: a hostile call may send a thousand fields, or one
    named by a megabyte."""
    problems = error.errors(include_input=False)
    sentences = []
    for problem in problems[:most]:
        where = ".".join(str(part) for part in problem.get("loc", ()))
        if len(where) > 80:
            where = where[:80] + "…"
        kind = problem.get("type", "")
        if kind == "extra_forbidden":
            sentences.append(f"unknown field: {where}")
        elif kind == "missing":
            sentences.append(f"{where}: required")
        else:
            message = str(problem.get("msg", "invalid")).removeprefix("Value error, ")
            sentences.append(f"{where}: {message}" if where else message)
    if len(problems) > most:
        sentences.append(f"and {len(problems) - most} more")
    return "; ".join(sentences)
