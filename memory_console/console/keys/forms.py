"""The API keys page's filters and the new key's form."""

from datetime import datetime, time

from django import forms
from django.utils import timezone
from django.utils.dateparse import parse_date

from memory_console.console.common.forms import ActionForm, Bounded, Filter, Text
from memory_console.console.keys.reads import STATES
from memory_core.accounts.permissions import role_for
from memory_core.errors import Forbidden
from memory_core.ledger import access_log
from memory_core.models import Scope
from memory_core.models.access import Role


class KeyFilter(Filter):
    """`?state=` (live, paused, expired, revoked) and `?reach=<token>`; a bad state is none."""

    state = forms.ChoiceField(required=False, choices=[(state, state) for state in STATES])
    reach = Bounded(161)


class KeyCreateForm(ActionForm):
    """A new key: the scope it will reach (one the user administers), its name (checked by
    keys.create_api_key), an optional expiry date and an optional actor to bind it to
    (named as the key will name it: relative to its reach's tenant, or qualified; checked
    by keys.create_api_key, as `create_api_key --actor` is)."""

    reach = Text()
    name = Text(strip=False)
    expires = Text()
    actor = Text()

    def __init__(self, data, *, user, principal):
        super().__init__(data)
        self.user = user
        self.principal = principal

    def clean_reach(self) -> Scope:
        """The scope a new key will reach, if the user administers it.

        An unknown token and a scope outside the user's admin grants get one answer, a
        logged 403 (raised from here, before any other field is looked at), so the form
        cannot be used to find out which scopes exist. The service checks again when it
        creates the key.
        """
        token = self.cleaned_data["reach"]
        if not token:
            raise forms.ValidationError("choose the scope the key will reach")
        scope = Scope.objects.filter(token=token).first()
        if scope is None and self.user.is_superuser:
            raise forms.ValidationError(f"there is no scope {token}")
        if scope is None or role_for(self.user, scope) != Role.ADMIN:
            with access_log.refusals_logged(self.principal, "api_key.create", scope=token[:161]):
                raise Forbidden(f"you do not administer {token}")
        return scope

    def clean_expires(self):
        """The key stops working at the start of that day (in the server's time zone).
        Empty: never expires."""
        value = self.cleaned_data["expires"]
        if not value:
            return None
        try:
            day = parse_date(value)
        except ValueError:
            day = None
        if day is None:
            raise forms.ValidationError("the expiry must be a date (YYYY-MM-DD)")
        return timezone.make_aware(datetime.combine(day, time.min))

    def clean_actor(self) -> str | None:
        return self.cleaned_data["actor"] or None
