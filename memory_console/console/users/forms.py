"""The Users page's search and the grant and password forms. Creating a user is Django's own
UserCreationForm, password validators included."""

from django import forms

from memory_console.console.common.forms import ActionForm, Bounded, Checkbox, Filter, Text
from memory_core.models import Scope


class UserSearch(Filter):
    """`?q=`: a piece of a username."""

    q = Bounded(150)


class GrantForm(ActionForm):
    """Give `username` a role at a scope (memory_core.accounts.grants checks the user and
    the role)."""

    username = Text()
    scope = Text()
    role = Text(strip=False)

    def clean_scope(self) -> Scope:
        token = self.cleaned_data["scope"]
        scope = Scope.objects.filter(token=token).first()
        if scope is None:
            raise forms.ValidationError(
                f"there is no scope {token!r}: choose one of the scopes offered"
            )
        return scope


class GrantRevokeForm(ActionForm):
    """The grant to revoke: whose, at which scope (as the list sent them)."""

    username = Text(strip=False)
    scope = Text(strip=False)


class PasswordForm(ActionForm):
    """A new password, typed twice (memory_core.accounts.users checks it)."""

    password1 = Text(strip=False)
    password2 = Text(strip=False)

    def clean(self):
        values = super().clean()
        if values.get("password1") != values.get("password2"):
            raise forms.ValidationError("the two passwords differ")
        return values


class DeactivateForm(ActionForm):
    """`confirm`: sent by the confirmation step's button; without it nothing changes."""

    confirm = Checkbox()
