"""A model of the four writes the race test runs at once, to enumerate their serial orders.

The rows of one (key) at two scopes: `A` (the actor's own scope) and `T` (tenant:race, the
promotion target). Every operation writes a distinct text, so a row is named by its text.
`outcomes(ops)` runs every order of the operations on the model and returns the set of
(which operations succeeded, final rows) that some serial order produces; the test checks
that what the server did is one of them.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Row:
    scope: str  # "A" or "T"
    text: str
    lineage: str
    live: bool = True
    reason: str = ""
    supersedes: str | None = None  # text of the row this one supersedes
    promoted_from: str | None = None


@dataclass(frozen=True)
class Op:
    kind: str  # "remember" | "correct" | "promote" | "forget"
    text: str | None = None  # the text it writes (remember, correct, promote)
    retire_original: bool = False  # promote only


def _live(rows: dict[str, Row], scope: str) -> Row | None:
    return next((r for r in rows.values() if r.scope == scope and r.live), None)


def apply(rows: dict[str, Row], op: Op, target: str) -> bool:
    """Run `op` on `rows` (text -> Row, mutated) against memory `target`; False = refused."""
    if op.kind == "remember":  # the agent: always at A, superseding what is live there
        live = _live(rows, "A")
        if live:
            rows[live.text] = replace(live, live=False, reason="superseded")
        rows[op.text] = Row(
            "A",
            op.text,
            live.lineage if live else f"lineage-{op.text}",
            supersedes=live.text if live else None,
        )
        return True
    memory = rows.get(target)
    if memory is None:  # forgotten: the console's lookup is a 404
        return False
    if op.kind == "correct":
        live = _live(rows, "A")
        if live is None or live.text != target:
            return False
        rows[target] = replace(memory, live=False, reason="superseded")
        rows[op.text] = Row("A", op.text, memory.lineage, supersedes=target)
        return True
    if op.kind == "promote":
        if not memory.live:
            return False
        live = _live(rows, "T")
        if live:
            rows[live.text] = replace(live, live=False, reason="superseded")
        rows[op.text] = Row(
            "T",
            op.text,
            live.lineage if live else f"lineage-{op.text}",
            supersedes=live.text if live else None,
            promoted_from=target,
        )
        if op.retire_original:
            rows[target] = replace(rows[target], live=False, reason="promoted")
        return True
    if op.kind == "forget":  # every version of the lineage goes; promotions lose the link
        gone = {t for t, r in rows.items() if r.lineage == memory.lineage}
        for text in gone:
            del rows[text]
        for text, row in list(rows.items()):
            if row.promoted_from in gone:
                rows[text] = replace(row, promoted_from=None)
        return True
    raise ValueError(op.kind)


def outcomes(initial: list[Row], ops: list[Op], target: str) -> set[tuple]:
    """Every (successes, final state) some serial order of `ops` produces."""
    found = set()
    for order in itertools.permutations(range(len(ops))):
        rows = {r.text: r for r in initial}
        succeeded = [False] * len(ops)
        for index in order:
            succeeded[index] = apply(rows, ops[index], target)
        found.add((tuple(succeeded), canonical(rows.values())))
    return found


def canonical(rows) -> frozenset:
    """What is compared: each row's place, text, state and links (not lineage ids)."""
    return frozenset(
        (r.scope, r.text, r.live, r.reason, r.supersedes, r.promoted_from) for r in rows
    )
