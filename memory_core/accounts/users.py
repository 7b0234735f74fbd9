"""Console users: create, deactivate, reactivate, set a new password (superusers and
operators only).

Each is an audited change (changes.audited) with a ledger event on the global stream, as
users are not of any one scope. No password material goes anywhere but Django's hasher:
not the ledger, not the access log, not an error message.
"""

from collections.abc import Sequence

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError

from memory_core.accounts.grants import check_role, set_grant
from memory_core.actors import global_scope
from memory_core.changes import audited
from memory_core.db.locks import advisory_xact_lock
from memory_core.errors import Forbidden, Invalid, NotFound
from memory_core.models import Scope


def create_user(
    username: str,
    password: str,
    *,
    principal,
    grants: Sequence[tuple[Scope, str]] = (),
    superuser: bool = False,
    email: str = "",
):
    """A new console user with its password (Django's validators) and, in the same change,
    its grants: a `user.created` event, then a `grant.set` event per grant, or nothing at
    all when anything is refused. Without a grant a user sees nothing (a superuser needs
    none). The ledger names the user and, for a superuser, `role: superuser`."""
    with audited(principal, "user.create") as change:
        _check_superuser(principal)
        User = get_user_model()
        username = _checked_username(User, username)
        scopes = [scope.token for scope, _ in grants]
        if len(set(scopes)) != len(scopes):
            raise Invalid("name each scope once: a user holds one role per scope")
        for _, role in grants:
            check_role(role)
        if not password:
            raise Invalid("a new user needs a password")
        try:
            validate_password(password, User(username=username))
        except ValidationError as error:
            raise Invalid(" ".join(error.messages)) from None
        # Two creations of one name: the second waits here, then finds the first's user.
        advisory_xact_lock("user", username.casefold())
        if User.objects.filter(username__iexact=username).exists():
            raise Invalid(f"a user named {username!r} exists already")
        make = User.objects.create_superuser if superuser else User.objects.create_user
        person = make(username, email=email, password=password)
        payload = {"user": username, **({"role": "superuser"} if superuser else {})}
        change.event("user.created", global_scope(), payload)
        for scope, role in grants:
            set_grant(change, person, scope, role)
        change.log(201, detail={"user": username})
    return person


def _checked_username(User, username: str) -> str:
    """The username as Django's own forms clean it, or Invalid with their message."""
    username = User.normalize_username((username or "").strip())
    try:
        User._meta.get_field(User.USERNAME_FIELD).clean(username, None)
    except ValidationError as error:
        raise Invalid(f"username: {' '.join(error.messages)}") from None
    return username


def set_active(username: str, active: bool, *, principal):
    """Deactivate (cannot log in, existing sessions end) or reactivate a user."""
    action = "user.reactivate" if active else "user.deactivate"
    with audited(principal, action) as change:
        _check_superuser(principal)
        person = _locked(username)
        if not active and principal.user is not None and principal.user.pk == person.pk:
            raise Invalid("you cannot deactivate yourself")
        if person.is_active == active:
            change.unchanged()  # already so: a second click, or another superuser
            return person
        person.is_active = active
        person.save(update_fields=["is_active"])
        kind = "user.reactivated" if active else "user.deactivated"
        change.event(kind, global_scope(), {"user": username, "active": active})
        change.log(200, detail={"user": username})
    return person


def set_password(username: str, password: str, *, principal):
    """Give a user a new password, checked by Django's password validators."""
    with audited(principal, "user.set_password") as change:
        _check_superuser(principal)
        person = _locked(username)
        try:
            validate_password(password, person)
        except ValidationError as error:
            raise Invalid(" ".join(error.messages)) from None
        person.set_password(password)
        person.save(update_fields=["password"])
        change.event("user.password_set", global_scope(), {"user": username})
        change.log(200, detail={"user": username})
    return person


def _locked(username: str):
    person = get_user_model().objects.select_for_update().filter(username=username).first()
    if person is None:
        raise NotFound(f"no user {username!r}")
    return person


def _check_superuser(principal) -> None:
    if principal.kind != "system" and not (principal.user and principal.user.is_superuser):
        raise Forbidden("only a superuser manages users")
