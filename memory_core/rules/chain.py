"""The one resolver of an actor's chain.

The chain is the whole of precedence (narrowest first) and also the whole of visibility
(what an actor may read and write). A system that answered "which scopes apply to this
actor" in two places would eventually answer it two ways, and the difference would be a
privacy bug, so every caller goes through `resolve_chain`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

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


def memberships_after_put(
    current: Sequence[str],
    requested: Sequence[str],
    inside: Collection[str],
    keep: str | None = None,
) -> list[str]:
    """An actor's memberships after a PUT by a key that may change only `inside` ones.

    `current`: the memberships now, narrowest first; `requested`: what the PUT lists (every
    one inside the key's reach, the reach itself included); `inside`: which of `current` lie
    inside the reach. The ones outside keep their places and their order; the requested
    ones take the place of the first membership inside the reach (at the end when there is
    none). `keep` (an actor's own tenant) is never removed: appended, as the widest, when
    missing. A key narrower than a tenant could otherwise drop `tenant:T` or another team,
    and with it the people who govern that actor.
    """
    first = next((i for i, token in enumerate(current) if token in inside), len(current))
    before = [token for token in current[:first] if token not in inside]
    after = [token for token in current[first:] if token not in inside]
    kept = set(before) | set(after)
    merged = before + [token for token in requested if token not in kept] + after
    if keep is not None and keep not in merged:
        merged.append(keep)
    return merged
