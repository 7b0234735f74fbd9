"""The ledger and access-log pages' filters (shared with their exports, which refuse a
malformed one where the pages ignore it), the chain check's upload, and an export's pinned
range."""

from datetime import UTC, datetime, timedelta

from django import forms

from memory_console.console.common.forms import ActionForm, Text
from memory_console.console.common.parameters import BIGINT_MAX
from memory_core.errors import Invalid

# Offered as suggestions (a datalist); the filters match any exact value, so a kind or an
# action added later is still filterable before anyone updates these lists.
LEDGER_KINDS = [
    "memory.remembered",
    "memory.published",
    "memory.corrected",
    "memory.promoted",
    "memory.pinned",
    "memory.unpinned",
    "memory.invalidated",
    "memory.reinstated",
    "memory.reverted",
    "memory.tagged",
    "memory.forgotten",
    "scope.created",
    "actor.registered",
    "actor.put",
    "actor.erased",
    "actor.erase_started",
    "actor.reopened",
    "api_key.created",
    "api_key.revoked",
    "grant.set",
    "grant.revoked",
    "history.pruned",
]
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


class LedgerFilter(TimeRangeFilter):
    kind = forms.CharField(required=False, max_length=40, strip=True)
    scope = forms.CharField(required=False, max_length=161, strip=True)
    principal = forms.CharField(required=False, max_length=200, strip=True)


class AccessFilter(TimeRangeFilter):
    principal = forms.CharField(required=False, max_length=200, strip=True)
    actor = forms.CharField(required=False, max_length=128, strip=True)
    action = forms.CharField(required=False, max_length=40, strip=True)
    outcome = forms.TypedChoiceField(
        required=False,
        coerce=int,
        empty_value=None,
        choices=[
            ("", "any outcome"),
            ("200", "200 done"),
            ("201", "201 created"),
            ("204", "204 done"),
            ("401", "401 no key"),
            ("403", "403 forbidden"),
            ("404", "404 not found"),
            ("422", "422 invalid"),
        ],
    )
    refused = forms.BooleanField(required=False)


class VerifyForm(ActionForm):
    """The chain check: with a checkpoint file (and optionally the public key to trust) the
    checkpoint is checked too (verification.py reads the files); `next` is the page to go
    back to. An empty file is a file: its reader says what is wrong with it."""

    checkpoint = forms.FileField(required=False, allow_empty_file=True, widget=forms.FileInput)
    public_key = forms.FileField(required=False, allow_empty_file=True, widget=forms.FileInput)
    next = Text(strip=False)


# --- an export's own parameters (export_views.py) ------------------------------------------
# A page ignores a malformed filter (a stale bookmark still shows the page); an export that
# did would prove more than was asked for, every row where a window was meant: each of
# these, and each page filter, must hold, or the export is a 422 before its first byte.

# The earliest `at` an export may be pinned to (nothing here is older than the epoch).
EARLIEST_AT = datetime(1970, 1, 1, tzinfo=UTC)


def strict(form: forms.Form) -> forms.Form:
    """`form` (a page's filters), every one of which must hold for an export."""
    if not form.is_valid():
        problems = "; ".join(f"{name}: {' '.join(errors)}" for name, errors in form.errors.items())
        raise Invalid(f"malformed filter ({problems})")
    return form


class WholeNumber(forms.CharField):
    """An optional whole number from 0 to BIGINT_MAX (None when not given)."""

    def __init__(self, name: str):
        super().__init__(required=False)
        self.name = name

    def to_python(self, value) -> int | None:
        raw = super().to_python(value)
        if not raw:
            return None
        try:
            number = int(raw)
        except ValueError:
            raise forms.ValidationError(f"{self.name} must be a whole number") from None
        if number < 0:
            raise forms.ValidationError(f"{self.name} must not be negative")
        if number > BIGINT_MAX:
            raise forms.ValidationError(f"{self.name} must be at most {BIGINT_MAX}")
        return number


class Instant(forms.CharField):
    """An optional ISO 8601 time with its zone, in UTC (None when not given)."""

    def __init__(self):
        super().__init__(required=False)

    def to_python(self, value) -> datetime | None:
        raw = super().to_python(value)
        if not raw:
            return None
        try:
            at = datetime.fromisoformat(raw.replace("Z", "+00:00"))
        except ValueError:
            raise forms.ValidationError("at must be an ISO 8601 time") from None
        if at.tzinfo is None:
            raise forms.ValidationError("at must name its time zone")
        try:
            at = at.astimezone(UTC)
        except OverflowError:
            at = None
        # Relative windows are measured back from `at`: it must leave room for them.
        if at is None or at < EARLIEST_AT:
            raise forms.ValidationError(
                f"at must lie between {EARLIEST_AT:%Y-%m-%d} and 9999-12-31"
            )
        return at


class Pinned(ActionForm):
    """What an export is pinned to (a manifest, or a repeated export): `upto`, the highest
    row id it covers, and `at`, the instant relative windows are measured back from."""

    upto = WholeNumber("upto")
    at = Instant()


class LedgerRange(ActionForm):
    """A ledger export's own narrowing, beside the page's filters: one stream, a range of
    sequence numbers."""

    stream = Text()
    seq_from = WholeNumber("seq_from")
    seq_to = WholeNumber("seq_to")
