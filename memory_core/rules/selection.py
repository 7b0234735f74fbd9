"""Selection: which resolved keys fit in one turn's budget of lines.

Precedence decides which value answers a key; selection decides which keys appear at
all. Three orders, each answering a different question:

1. pinned keys first, whatever the turn is about (a standing policy is rarely close to a
   query). If they alone overflow, the budget still bites: keep narrowest scope, then
   newest, and report the rest as `pinned_omitted`, the number operators alert on,
   because it means standing policies have stopped reaching prompts;
2. then relevance to the turn, when a search ranked keys (`recalled`);
3. then narrowest scope first and newest within a scope, so the widest and stalest notes
   are the first dropped.

The kept entries come back in rendering order (scope, then key), never in selection
order, so the block does not reshuffle between turns.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .chain import chain_rank
from .facts import Entry, Selection, SelectionStats


def select(
    entries: Iterable[Entry],
    chain: Sequence[str],
    max_lines: int,
    relevant_keys: Sequence[str] | None = None,
) -> Selection:
    entries = list(entries)
    rank = chain_rank(chain)
    room = max(0, max_lines)

    pinned = _narrowest_then_newest([e for e in entries if e.pinned], rank)
    kept = pinned[:room]
    pinned_omitted = len(pinned) - len(kept)
    kept_keys = {e.key for e in kept}

    recalled = 0
    by_key = {e.key: e for e in entries}
    for key in relevant_keys or ():
        if len(kept) >= room:
            break
        entry = by_key.get(key)
        if entry is None or key in kept_keys:
            continue
        kept.append(entry)
        kept_keys.add(key)
        recalled += 1

    rest = _narrowest_then_newest([e for e in entries if e.key not in kept_keys], rank)
    kept.extend(rest[: max(0, room - len(kept))])

    omitted = len(entries) - len(kept)
    stats = SelectionStats(
        offered=len(entries),
        omitted=omitted,
        pinned_omitted=pinned_omitted,
        recalled=recalled,
        partial=omitted > 0 or recalled > 0,
    )
    kept.sort(key=lambda e: (_rank_of(e, rank), e.key))
    return Selection(kept=tuple(kept), stats=stats)


def _rank_of(entry: Entry, rank: dict[str, int]) -> int:
    # An entry outside the chain should not reach here; if one does, it sorts widest.
    return rank.get(entry.scope, len(rank))


def _narrowest_then_newest(entries: list[Entry], rank: dict[str, int]) -> list[Entry]:
    # One sort on (scope rank, newest first, key): the key makes equal timestamps
    # deterministic. A timestamp's float keeps microsecond order for any date this
    # century, and one composite key is three times cheaper than three stable sorts.
    widest = len(rank)
    return sorted(
        entries,
        key=lambda e: (
            rank.get(e.winner.scope, widest),
            -e.winner.created_at.timestamp(),
            e.winner.key,
        ),
    )
