"""The ledger and access-log pages' filters (shared with their exports, which refuse what
the pages ignore: export_forms.py), and the chain check's upload."""

from datetime import datetime, timedelta

from django import forms

from memory_console.console.common.forms import ActionForm, Text
from memory_console.console.common.names import TypedNames
from memory_core.ledger.kinds import EVENT_KINDS
from memory_core.rules.scopes import REF_MAX_CHARS, SCOPE_MAX_CHARS

# Offered as suggestions (a datalist): every kind the code writes (memory_core/ledger/kinds.py,
# held to the services by a test). The page's filter matches any exact value; an export
# refuses a kind that is none of these.
LEDGER_KINDS = list(EVENT_KINDS)
# Offered as suggestions; the filters match any exact value, so an action added later is
# still filterable before anyone updates this list.
ACCESS_ACTIONS = [
    "turn",
    "preview",
    "remember",
    "read_back",
    "search",
    "memory.get",
    "memory.read",
    "scope.read",
    "actor.read",
    "run.read",
    "thread.read",
    "garden.read",
    "memory.find",
    "actor.search",
    "publish",
    "correct",
    "promote",
    "invalidate",
    "reinstate",
    "revert",
    "tag",
    "forget",
    "actor.get",
    "actor.put",
    "actor.lookup",
    "actor.erase",
    "actor.erase.start",
    "actor.erase.batch",
    "actor.reopen",
    "message",
    "api_key.create",
    "api_key.revoke",
    "grant",
    "grant.revoke",
    # Evidence (README, "Evidence"): exports and signed checkpoints.
    "export.ledger",
    "export.access",
    "export.attribution",
    "ledger.checkpoint",
]
# The statuses that mean "refused" (docs/administrators/console.md): highlighted, countable,
# filterable.
REFUSED_FROM = 400
# Every outcome an access-log row can hold, as the outcome filter offers it: the statuses
# the services and views write, and those of the refusals they log (memory_core.errors).
# A request without a valid API key is a 401 and is never logged, so none is offered
# (tests/test_console_access_log.py reads the code for the statuses it can write).
LOGGED_OUTCOMES = [
    ("200", "200 done"),
    ("201", "201 created"),
    ("204", "204 done"),
    ("403", "403 forbidden"),
    ("404", "404 not found"),
    ("409", "409 conflict"),
    ("410", "410 gone (erased)"),
    ("422", "422 invalid"),
    ("429", "429 throttled"),
    ("503", "503 unavailable"),
]
TIME_WINDOWS = {
    "1h": timedelta(hours=1),
    "24h": timedelta(hours=24),
    "7d": timedelta(days=7),
    "30d": timedelta(days=30),
}


class TimeRangeFilter(forms.Form):
    """A preset window ("the last 24 h") or explicit since / until (UTC). Like every
    console filter, a malformed value is ignored rather than refused."""

    window = forms.ChoiceField(
        required=False,
        choices=[
            ("", "any time"),
            ("1h", "last hour"),
            ("24h", "last 24 hours"),
            ("7d", "last 7 days"),
            ("30d", "last 30 days"),
        ],
    )
    since = forms.DateTimeField(required=False)
    until = forms.DateTimeField(required=False)

    def values(self) -> dict:
        """What the form shows back: strings, datetimes as a datetime-local input wants."""
        self.is_valid()
        out = {}
        for name in self.fields:
            value = self.cleaned_data.get(name)
            if isinstance(value, datetime):
                value = value.strftime("%Y-%m-%dT%H:%M")
            elif isinstance(value, int) and not isinstance(value, bool):
                value = str(value)  # an outcome, compared with the <option> values
            out[name] = value or ""
        return out

    def bounds(self, now) -> tuple[datetime | None, datetime | None]:
        self.is_valid()
        window = self.cleaned_data.get("window")
        since = now - TIME_WINDOWS[window] if window else self.cleaned_data.get("since")
        return since, self.cleaned_data.get("until")


class Tick(forms.Field):
    """A checkbox filter: on, 1, true or yes is ticked; off, 0, false, no or nothing is not;
    anything else is malformed (ignored by a page, refused by an export). A BooleanField
    would read "off" or "maybe" as ticked."""

    widget = forms.TextInput  # the value as sent (a CheckboxInput reads any text as ticked)
    TICKED = frozenset({"on", "1", "true", "yes"})
    UNTICKED = frozenset({"", "off", "0", "false", "no"})

    def __init__(self, **options):
        super().__init__(required=False, **options)

    def to_python(self, value) -> bool:
        text = "" if value in (None, False) else "on" if value is True else str(value)
        text = text.strip().lower()
        if text in self.TICKED:
            return True
        if text in self.UNTICKED:
            return False
        raise forms.ValidationError(f"{value!r} is neither on nor off")


class LedgerFilter(TypedNames, TimeRangeFilter):
    """`kind`, `scope` (as the user types it: relative to their tenant, common/names.py),
    `principal`, and the time fields."""

    SCOPE_FIELDS = ("scope",)

    kind = forms.CharField(required=False, max_length=40, strip=True)
    scope = forms.CharField(required=False, max_length=SCOPE_MAX_CHARS, strip=True)
    principal = forms.CharField(required=False, max_length=200, strip=True)


class AccessFilter(TypedNames, TimeRangeFilter):
    """`principal`, `actor` (as the user types it), `action`, `outcome`, `refused`, and the
    time fields."""

    ACTOR_FIELDS = ("actor",)

    principal = forms.CharField(required=False, max_length=200, strip=True)
    actor = forms.CharField(required=False, max_length=REF_MAX_CHARS, strip=True)
    action = forms.CharField(required=False, max_length=40, strip=True)
    outcome = forms.TypedChoiceField(
        required=False,
        coerce=int,
        empty_value=None,
        choices=[("", "any outcome"), *LOGGED_OUTCOMES],
    )
    refused = Tick()


class VerifyForm(ActionForm):
    """The chain check: with a checkpoint file (and optionally the public key to trust) the
    checkpoint is checked too (verification.py reads the files); `next` is the page to go
    back to. An empty file is a file: its reader says what is wrong with it."""

    checkpoint = forms.FileField(required=False, allow_empty_file=True, widget=forms.FileInput)
    public_key = forms.FileField(required=False, allow_empty_file=True, widget=forms.FileInput)
    next = Text(strip=False)
