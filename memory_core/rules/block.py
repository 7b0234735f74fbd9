"""The prompt block: the kept entries as text a model reads at the start of a turn.

Entries are split by who wrote the winning value, not by scope. A person's note is an
instruction and is framed as one; the agent's own conclusion may be stale and the user
outranks it. Framing a published policy as "your own notes" would hand every user an
override of it by simply asserting the opposite.

Order is chain index of scope, then key, never score or recency: the block stays
byte-identical between turns unless a memory changed, which keeps prompt caches warm.
"""

from __future__ import annotations

from collections.abc import Sequence

from .chain import chain_rank
from .facts import Entry, Line, Record, Rendered

FORGOTTEN = "[forgotten]"

OPEN, CLOSE = "<memory>", "</memory>"
INTRO = (
    "This is what has been recorded about the user you are helping and the groups they "
    "belong to, one note per line as [scope] key: text. When the same key is held at "
    "several scopes, the most specific scope takes effect. If a broader value is listed "
    "beneath a note, mention to the user that their own setting departs from it instead "
    "of quietly choosing one of the two."
)
HUMAN_HEADER = (
    "Stated by people. Someone wrote each of these on purpose (the user, or an "
    "administrator of their organisation), so follow them as you would any instruction. "
    "If the user says something that conflicts with one, name that note and the scope it "
    "is held at rather than setting it aside unannounced."
)
AGENT_HEADER = (
    "Concluded by you. You drew these from earlier conversations yourself; they can be "
    "mistaken or out of date, so what the user tells you now takes priority over them."
)
PARTIAL_NOTICE = (
    "Only some of the notes on file are listed here and others exist, so never conclude "
    "from a note's absence that it was never recorded."
)

ENTRY_MARK = "- "
OVERRIDE_MARK = "    ↳ "


def render(kept: Sequence[Entry], chain: Sequence[str], partial: bool) -> Rendered:
    """The block and its memory lines (numbered from 1 in block order). Empty when nothing
    was kept: no frame, no notice, so a turn without memories costs nothing."""
    if not kept:
        return Rendered(block="", lines=())
    rank = chain_rank(chain)

    def order(e: Entry) -> tuple[int, str]:
        return (rank.get(e.scope, len(rank)), e.key)

    text_lines = [OPEN, INTRO]
    memory_lines: list[Line] = []

    def add(text: str, record: Record) -> None:
        text_lines.append(text)
        memory_lines.append(Line(n=len(memory_lines) + 1, text=text, memory_id=record.id))

    for author, header in (("human", HUMAN_HEADER), ("agent", AGENT_HEADER)):
        section = sorted((e for e in kept if e.winner.author == author), key=order)
        if not section:
            continue
        text_lines.append(header)
        for entry in section:
            add(f"{ENTRY_MARK}[{entry.scope}] {entry.key}: {entry.winner.text}", entry.winner)
            beaten = sorted(entry.overrides, key=lambda r: rank.get(r.scope, len(rank)))
            for record in beaten:
                add(_override_line(record), record)
    if partial:
        text_lines.append(PARTIAL_NOTICE)
    text_lines.append(CLOSE)
    return Rendered(block="\n".join(text_lines), lines=tuple(memory_lines))


def _override_line(record: Record) -> str:
    said = "a person stated" if record.author == "human" else "instead has"
    return f"{OVERRIDE_MARK}[{record.scope}] {said}: {record.text}"


def scrub(block: str, lines: Sequence[Line], memory_ids: set[str]) -> tuple[str, tuple[Line, ...]]:
    """Replace what forgotten memories said, in a stored block and its lines.

    The line stays (an auditor still sees that the prompt had a line there) but its scope,
    key and text go: a key reveals as much as the fact. Lines are rewritten by position
    (the nth memory line of the block), never by searching for the text, which could
    also match, and so erase, a different memory that happens to contain it.
    """
    targets = {line.n for line in lines if line.memory_id in memory_ids}
    if not targets:
        return block, tuple(lines)

    text_lines = block.split("\n")
    n = 0
    for i, text in enumerate(text_lines):
        # Facts are single-line and the framing never starts with a marker, so every
        # marker line is a memory line.
        mark = next((m for m in (ENTRY_MARK, OVERRIDE_MARK) if text.startswith(m)), None)
        if mark is None:
            continue
        n += 1
        if n in targets:
            text_lines[i] = mark + FORGOTTEN
    if max(targets) > n:
        raise ValueError(f"block has {n} memory lines but line {max(targets)} was asked for")

    scrubbed = tuple(
        Line(n=line.n, text=FORGOTTEN, memory_id=line.memory_id) if line.n in targets else line
        for line in lines
    )
    return "\n".join(text_lines), scrubbed
