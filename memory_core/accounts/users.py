"""Console users: deactivate, reactivate, set a new password (superusers and operators only).

Each is an audited change (changes.audited) with a ledger event on the global stream, as
users are not of any one scope. No password material goes anywhere but Django's hasher:
not the ledger, not the access log, not an error message.
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError

from memory_core.actors import global_scope
from memory_core.changes import audited
from memory_core.errors import Forbidden, Invalid, NotFound


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
