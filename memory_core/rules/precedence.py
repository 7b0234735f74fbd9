"""Precedence: for each key, the narrowest scope in the chain wins.

Author plays no part: an agent's note at `actor:u1` beats an administrator's policy at
`global`. The winner carries every value it beat (with its author), so the block can
show both and the model can tell the user their setting differs from the wider one,
instead of silently applying one of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from .chain import chain_rank
from .facts import Entry, Record


def resolve(
    records: Iterable[Record], chain: Sequence[str], now: datetime | None = None
) -> list[Entry]:
    """One `Entry` per key, sorted by (chain index of the winner's scope, key).

    Records outside the chain are dropped here as a backstop: the query should never have
    returned them, and trusting it would turn a query bug into a cross-tenant leak.
    """
    rank = chain_rank(chain)
    by_key: dict[str, list[Record]] = {}
    for record in records:
        if record.scope not in rank:
            continue
        if now is not None and record.expires_at is not None and record.expires_at <= now:
            continue
        group = by_key.get(record.key)
        if group is None:
            by_key[record.key] = [record]
        else:
            group.append(record)

    entries = []
    for group in by_key.values():
        # Most keys are held at one scope only: nothing to order (a turn resolves ~500).
        if len(group) == 1:
            only = group[0]
            entries.append(Entry(winner=only, overrides=(), pinned=only.pinned))
            continue
        ordered = _narrowest_then_newest(group, rank)
        entries.append(
            Entry(
                winner=ordered[0],
                overrides=tuple(ordered[1:]),
                pinned=any(r.pinned for r in ordered),
            )
        )
    entries.sort(key=lambda e: (rank[e.winner.scope], e.winner.key))
    return entries


def _narrowest_then_newest(records: list[Record], rank: dict[str, int]) -> list[Record]:
    # Two live rows at one (scope, key) cannot exist (a unique constraint forbids it);
    # if they ever did, the newest wins and id keeps the result independent of input order.
    ordered = sorted(records, key=lambda r: r.id)
    ordered.sort(key=lambda r: r.created_at, reverse=True)
    ordered.sort(key=lambda r: rank[r.scope])
    return ordered
