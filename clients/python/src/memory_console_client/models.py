"""The API's answers as typed, frozen dataclasses: one class per response schema, with the
API's own field names (docs/agents/api.md on the server's site).

`decode(cls, data)` builds one from the JSON body, guided by the annotations alone, so the
annotations are the whole description of a result; the server's test suite holds them to
its OpenAPI document (field names, types, enums, nullability). Fields the server adds
later are ignored, so an older client keeps working against a newer server.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Union

Author = Literal["human", "agent"]
Role = Literal["user", "assistant", "tool"]


@dataclass(frozen=True)
class Override:
    """A wider value of the same key that the memory beats."""

    id: str
    scope: str
    text: str
    author: Author


@dataclass(frozen=True)
class AgentOrigin:
    """Where an agent's memory came from. `resolves` is False once the conversation is gone."""

    actor: str | None
    thread_id: str | None
    run_id: str | None
    tool_call_id: str | None
    resolves: bool


@dataclass(frozen=True)
class HumanOrigin:
    """A memory a person wrote in the console."""

    user: str | None
    resolves: bool


@dataclass(frozen=True)
class Memory:
    """One memory version, as every endpoint returns it."""

    id: str
    key: str
    text: str
    scope: str
    pinned: bool
    tags: list[str]
    author: Author
    origin: AgentOrigin | HumanOrigin
    created_at: datetime
    supersedes: str | None
    overrides: list[Override]


@dataclass(frozen=True)
class Similar:
    """A live memory of the same actor, under another key, holding (nearly) the same fact."""

    id: str
    key: str
    scope: str


@dataclass(frozen=True)
class Remembered(Memory):
    """What `remember` wrote (or, for a repeated run_id/tool_call_id, had written)."""

    similar: list[Similar]


@dataclass(frozen=True)
class Line:
    """One line of the prompt block, with the memory version behind it."""

    n: int
    text: str
    memory_id: str


@dataclass(frozen=True)
class Stats:
    offered: int
    omitted: int
    pinned_omitted: int
    recalled: int
    prompt_chars: int
    partial: bool


@dataclass(frozen=True)
class Turn:
    """What an agent is given at the start of a turn: `block` goes into the prompt as is."""

    run_id: str
    actor: str
    scopes: list[str]
    block: str
    entries: list[Memory]
    lines: list[Line]
    stats: Stats


@dataclass(frozen=True)
class MemoryPage:
    """One page of the read-back; `count` counts every applicable key."""

    items: list[Memory]
    count: int


@dataclass(frozen=True)
class SearchResult:
    """The best keys for a search, best first, plus every pinned key."""

    items: list[Memory]
    tier: Literal["fts", "trigram", "like", "hybrid"]


@dataclass(frozen=True)
class Actor:
    """An actor and its chain of scopes, narrowest first."""

    ref: str
    display_name: str
    scopes: list[str]


@dataclass(frozen=True)
class Message:
    """A message stored in a thread's transcript."""

    id: str
    thread_id: str
    run_id: str | None
    role: Role
    created_at: datetime


@dataclass(frozen=True)
class Extraction:
    """What one extraction of a thread wrote; `watermark` is the last message it read."""

    written: list[Memory]
    unchanged: int
    dropped: int
    watermark: str | None


@dataclass(frozen=True)
class Health:
    status: Literal["ok", "degraded"]
    database: Literal["ok", "unreachable"]


def decode(cls: type, data: Any) -> Any:
    """`data` (parsed JSON) as an instance of the annotation `cls`."""
    origin = typing.get_origin(cls)
    if origin in (Union, types.UnionType):
        options = typing.get_args(cls)
        if data is None and type(None) in options:
            return None
        classes = [option for option in options if option is not type(None)]
        if len(classes) == 1:
            return decode(classes[0], data)
        # A union of result classes (an origin): the first whose fields are all present.
        for option in classes:
            if isinstance(option, type) and dataclasses.is_dataclass(option):
                if (
                    isinstance(data, dict)
                    and {f.name for f in dataclasses.fields(option)} <= data.keys()
                ):
                    return decode(option, data)
        raise TypeError(f"the server's answer {data!r} matches none of {classes}")
    if origin is list:
        (item,) = typing.get_args(cls)
        return [decode(item, element) for element in data]
    if origin is Literal or cls in (str, int, bool, Any):
        return data
    if cls is float:
        return float(data)
    if cls is datetime:
        return datetime.fromisoformat(data.replace("Z", "+00:00"))
    if dataclasses.is_dataclass(cls):
        hints = typing.get_type_hints(cls)
        missing = [f.name for f in dataclasses.fields(cls) if f.name not in data]
        if missing:
            raise TypeError(f"the server's answer has no {', '.join(missing)} for {cls.__name__}")
        return cls(**{f.name: decode(hints[f.name], data[f.name]) for f in dataclasses.fields(cls)})
    raise TypeError(f"cannot decode {cls!r}")
