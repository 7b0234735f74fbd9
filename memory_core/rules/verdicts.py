"""Who may write and who may forget a memory, decided from plain data.

Writing. A principal writing for an actor (an agent, through the API) writes at that
actor's own scope (chain[0]) and nowhere else: the agent API has no scope parameter, and
a wider scope is shared state that everyone under it is then answered from, with no
document to inspect. Writing anywhere else needs a person whose admin grant reaches the
scope (`elevated`); an agent never writes above the actor's own scope, whatever elevation
it claims. Promotion is therefore a human act done in the console.
`permissions.write_verdict` fills in `human` and `elevated` for a principal and a scope:
every writing service asks it, and nothing else decides who may write where.

Forgetting. An actor may forget its own-scope memories with nobody's permission: the
API must not be able to ask a question whose answer could be "no" to someone deleting
what is known about them. A memory held at a wider scope that the actor can see is
"forbidden" (403): removing shared state is the console's job. A memory outside the
chain is "not_found" (404), never 403, because a 403 would confirm that the id exists
and let anyone probe what is recorded about other people.
"""

from __future__ import annotations

from collections.abc import Sequence

from .facts import Verdict

ALLOW, FORBIDDEN, NOT_FOUND = "allow", "forbidden", "not_found"


def write_verdict(scope: str, own_scope: str | None, *, human: bool, elevated: bool) -> Verdict:
    """May a principal write at `scope`? `own_scope` is the own scope of the actor it writes
    for (None when a person writes at a scope directly, as in the console); `elevated`:
    a grant of the principal's reaches `scope` as an administrator."""
    if own_scope is not None and scope == own_scope:
        return Verdict(allowed=True, reason="own_scope")
    if not human:
        return Verdict(allowed=False, reason="agent_above_own_scope")
    if not elevated:
        return Verdict(allowed=False, reason="needs_elevation")
    return Verdict(allowed=True, reason="elevated")


def forget_verdict(memory_scope: str, chain: Sequence[str]) -> str:
    """ALLOW; FORBIDDEN (the API answers 403); or NOT_FOUND (404, which reveals nothing)."""
    if memory_scope not in chain:
        return NOT_FOUND
    if memory_scope == chain[0]:
        return ALLOW
    return FORBIDDEN
