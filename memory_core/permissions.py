"""Which scopes a console user reaches through their grants (CONSOLE.md, "People").

A grant on S reaches S, every scope below S, and every actor whose chain contains S.
Superusers reach everything; operators at the command line act as the system.
"""

from memory_core.actors import ancestors, chain_of
from memory_core.models import Scope, ScopeGrant
from memory_core.models.access import Role


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


def can_administer(principal, scope: Scope) -> bool:
    if principal.kind == "system":
        return True
    if principal.kind == "user":
        return role_for(principal.user, scope) == Role.ADMIN
    return False


def can_read(principal, scope: Scope) -> bool:
    if principal.kind == "system":
        return True
    if principal.kind == "user":
        return role_for(principal.user, scope) is not None
    return False
