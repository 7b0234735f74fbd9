"""Which scopes a console user reaches through their grants (docs/administrators/index.md, "People
and what they may do"), and
who may write where.

A grant on S reaches S, every scope below S, and every actor whose chain contains S.
Superusers reach everything; operators at the command line act as the system.

The reach rule is answered two ways, for one scope (`role_for`, a few indexed reads) and
for every scope at once (`readable_scope_roles`, one recursive query, for pages that list
scopes); tests/test_rule_copies.py holds the two together over generated
organisations.
"""

from django.db import connection

from memory_core.actors import ancestors, chain_of
from memory_core.models import Scope, ScopeGrant
from memory_core.models.access import Role
from memory_core.rules import verdicts
from memory_core.rules.facts import Verdict


def _reaching_tokens(scope: Scope) -> set[str]:
    """Tokens whose grant would reach `scope`."""
    tokens = {s.token for s in ancestors(scope)}
    actor = getattr(scope, "actor", None) if scope.token.startswith("actor:") else None
    if actor is not None:
        tokens |= set(chain_of(actor))
    return tokens


def role_for(user, scope: Scope) -> str | None:
    """'admin', 'auditor' or None: the strongest role any of the user's grants gives here."""
    if user is None or not user.is_authenticated or not user.is_active:
        return None
    if user.is_superuser:
        return Role.ADMIN
    roles = set(
        ScopeGrant.objects.filter(user=user, scope__token__in=_reaching_tokens(scope)).values_list(
            "role", flat=True
        )
    )
    if Role.ADMIN in roles:
        return Role.ADMIN
    if Role.AUDITOR in roles:
        return Role.AUDITOR
    return None


# role_for for every scope at once: a grant on S reaches S and every scope below it in the
# tree, plus the own scope of every actor with a membership at S (an actor's chain may name
# a scope outside the branch its own scope hangs in). UNION (not UNION ALL) keeps the
# recursion finite even if the tree ever held a cycle.
_READABLE_SQL = """
WITH RECURSIVE reach(id, role) AS (
    SELECT g.scope_id, g.role FROM memory_core_scopegrant g WHERE g.user_id = %(user)s
    UNION
    SELECT s.id, r.role FROM memory_core_scope s JOIN reach r ON s.parent_id = r.id
)
SELECT id, role FROM reach
UNION
SELECT a.scope_id, g.role
FROM memory_core_scopegrant g
JOIN memory_core_membership m ON m.scope_id = g.scope_id
JOIN memory_core_actor a ON a.id = m.actor_id
WHERE g.user_id = %(user)s
"""


def readable_scope_roles(user) -> dict[int, str] | None:
    """{scope id: role_for(user, scope)} for every scope the user reads; None means "all"
    (a superuser).

    One query, however many grants and scopes: a page listing scopes must not ask role_for
    once per scope.
    """
    if user is None or not user.is_authenticated or not user.is_active:
        return {}
    if user.is_superuser:
        return None
    roles: dict[int, str] = {}
    with connection.cursor() as cursor:
        cursor.execute(_READABLE_SQL, {"user": user.pk})
        for scope_id, role in cursor.fetchall():
            if roles.get(scope_id) != Role.ADMIN:
                roles[scope_id] = role
    return roles


def can_administer(principal, scope: Scope) -> bool:
    if principal.kind == "system":
        return True
    if principal.kind == "user":
        return role_for(principal.user, scope) == Role.ADMIN
    return False


def write_verdict(principal, scope: Scope, *, actor=None) -> Verdict:
    """Who may write at `scope` (DESIGN, "Who may write"): the one decision every writing
    service asks. `actor`: the actor the principal writes for (an agent's remember).

    The rule is verdicts.write_verdict; this supplies its facts. An agent's own scope needs
    no grant, so it costs no query; anything else needs an admin grant reaching the scope.
    """
    own = actor.scope.token if actor is not None else None
    human = principal.is_human
    elevated = human and scope.token != own and can_administer(principal, scope)
    return verdicts.write_verdict(scope.token, own, human=human, elevated=elevated)


def may_write(principal, scope: Scope) -> bool:
    """A person writing at `scope` directly (publish, correct, promote, pin, invalidate)."""
    return write_verdict(principal, scope).allowed
