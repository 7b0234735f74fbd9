"""Plain data the memory rules work on.

The rules (precedence, selection, rendering, verdicts) take and return these immutable
values (named tuples and frozen dataclasses) instead of model instances, so they run
without a database and the API, the console and the management commands all get the
same answer from the same code.
Services translate rows into `Record`s at the edge.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple


class Record(NamedTuple):
    """One live memory version at one scope; `author` is "human" or "agent".

    A NamedTuple rather than a frozen dataclass: a turn builds one per chain row (several
    hundred), and a tuple is built four times faster."""

    id: str
    scope: str
    key: str
    text: str
    author: str
    pinned: bool
    created_at: datetime
    expires_at: datetime | None = None


class Entry(NamedTuple):
    """One key as an actor sees it: the winning record and every value it beat.

    `overrides` are in chain order, narrowest first. `pinned` is true when any record of
    the key in the chain is pinned, because a pin belongs to the question, not to whichever
    record answers it today: a personal override of a pinned policy stays always-on.
    """

    winner: Record
    overrides: tuple[Record, ...]
    pinned: bool

    @property
    def key(self) -> str:
        return self.winner.key

    @property
    def scope(self) -> str:
        return self.winner.scope

    @property
    def id(self) -> str:
        return self.winner.id


@dataclass(frozen=True)
class SelectionStats:
    """Counts an operator can alert on; they never carry a key or a fact."""

    offered: int
    omitted: int
    pinned_omitted: int
    recalled: int
    partial: bool


@dataclass(frozen=True)
class Selection:
    kept: tuple[Entry, ...]
    stats: SelectionStats


@dataclass(frozen=True)
class Line:
    """One prompt line and the memory version behind it, so an auditor can trace it."""

    n: int
    text: str
    memory_id: str


@dataclass(frozen=True)
class Rendered:
    block: str
    lines: tuple[Line, ...]

    @property
    def prompt_chars(self) -> int:
        return len(self.block)


@dataclass(frozen=True)
class Verdict:
    """Whether a write may happen; `reason` is a short machine word for logs and errors."""

    allowed: bool
    reason: str
