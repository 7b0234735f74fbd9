"""Console access: who holds which role at which scope."""

from django.contrib.auth import get_user_model
from django.db import transaction

from memory_core import audit, ledger
from memory_core.errors import Forbidden, Invalid, NotFound
from memory_core.models import Scope, ScopeGrant
from memory_core.models.access import Role


def grant(username: str, scope: Scope, role: str, *, principal) -> ScopeGrant:
    """Give (or change) a user's role at a scope. Superusers and operators only."""
    with audit.refusals_logged(principal, "grant", scope=scope.token):
        if role not in Role.values:
            raise Invalid(f"role must be one of {', '.join(Role.values)}")
        if principal.kind != "system" and not (principal.user and principal.user.is_superuser):
            raise Forbidden("only a superuser manages grants")
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise NotFound(f"no user {username!r}")
        with transaction.atomic():
            row, _ = ScopeGrant.objects.update_or_create(
                user=user, scope=scope, defaults={"role": role}
            )
            ledger.append("grant.set", scope, principal, {"user": username, "role": role})
    audit.record(principal, "grant", 200, scope=scope.token, detail={"role": role})
    return row


def revoke_grant(row: ScopeGrant, *, principal) -> None:
    with audit.refusals_logged(principal, "grant.revoke", scope=row.scope.token):
        if principal.kind != "system" and not (principal.user and principal.user.is_superuser):
            raise Forbidden("only a superuser manages grants")
        with transaction.atomic():
            scope, username = row.scope, row.user.get_username()
            row.delete()
            ledger.append("grant.revoked", scope, principal, {"user": username})
    audit.record(principal, "grant.revoke", 200, scope=scope.token)
