"""The one resolver of an actor's chain.

The chain is the whole of precedence (narrowest first) and also the whole of visibility
(what an actor may read and write). A system that answered "which scopes apply to this
actor" in two places would eventually answer it two ways, and the difference would be a
privacy bug, so every caller goes through `resolve_chain`.
"""

from __future__ import annotations

from collections.abc import Sequence

from .scopes import GLOBAL, actor_scope, is_valid_scope


def resolve_chain(actor_ref: str, memberships: Sequence[str]) -> tuple[str, ...]:
    """`("actor:<ref>", *memberships in the order given, "global")`.

    Duplicates keep their first (narrowest) position. Any `actor:` membership is dropped:
    only the actor's own scope may appear, or one person would read another's notes.
    `global` is always last, wherever (or whether) it was listed.
    """
    own = actor_scope(actor_ref)
    chain = [own]
    for token in memberships:
        if not is_valid_scope(token):
            raise ValueError(f"not a scope token: {token!r}")
        if token == GLOBAL or token.startswith("actor:") or token in chain:
            continue
        chain.append(token)
    chain.append(GLOBAL)
    return tuple(chain)


def chain_rank(chain: Sequence[str]) -> dict[str, int]:
    """Scope -> position in the chain (first occurrence), for sorting narrowest first."""
    rank: dict[str, int] = {}
    for i, scope in enumerate(chain):
        rank.setdefault(scope, i)
    return rank
