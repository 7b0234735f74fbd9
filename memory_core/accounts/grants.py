"""Console access: who holds which role at which scope."""

from django.contrib.auth import get_user_model

from memory_core.changes import Change, audited
from memory_core.errors import Forbidden, Invalid, NotFound
from memory_core.models import Scope, ScopeGrant
from memory_core.models.access import Role


def grant(username: str, scope: Scope, role: str, *, principal) -> ScopeGrant:
    """Give (or change) a user's role at a scope. Superusers and operators only."""
    with audited(principal, "grant", scope=scope.token) as change:
        check_role(role)
        _check_superuser(principal)
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise NotFound(f"no user {username!r}")
        row = set_grant(change, user, scope, role)
        change.log(200, detail={"role": role})
    return row


def check_role(role: str) -> None:
    if role not in Role.values:
        raise Invalid(f"role must be one of {', '.join(Role.values)}")


def set_grant(change: Change, user, scope: Scope, role: str) -> ScopeGrant:
    """The grant row and its ledger event, inside `change` (grant, users.create_user)."""
    row, _ = ScopeGrant.objects.update_or_create(user=user, scope=scope, defaults={"role": role})
    change.event("grant.set", scope, {"user": user.get_username(), "role": role})
    return row


def revoke_grant(row: ScopeGrant, *, principal) -> None:
    with audited(principal, "grant.revoke", scope=row.scope.token) as change:
        _check_superuser(principal)
        scope, username = row.scope, row.user.get_username()
        row.delete()
        change.event("grant.revoked", scope, {"user": username})
        change.log(200)


def _check_superuser(principal) -> None:
    if principal.kind != "system" and not (principal.user and principal.user.is_superuser):
        raise Forbidden("only a superuser manages grants")
