"""What an export takes (export_views.py), and what a page links of its own.

A page ignores a malformed filter (a stale bookmark still shows the page) and applies any
text as typed; an export that did either would prove more, or other, than was asked for:
every row where a window was meant, nothing where a kind was misspelt. So each page filter
(ledger/forms.py, read by `strict`) and each of an export's own parameters (`Pinned`,
`LedgerRange`) must hold, or the export is a 422 before its first byte.

A page links its export with its filters as it applied them (`export_offer`): names in
their stored form, no paging cursor, so the file holds exactly the rows the filters show,
every page of them; or, where the export would refuse them, the page says why.
"""

import difflib
import re
from datetime import UTC, datetime

from django import forms
from django.urls import reverse
from django.utils.http import urlencode

from memory_console.console.common.forms import ActionForm, Text
from memory_console.console.common.parameters import BIGINT_MAX
from memory_core.errors import Invalid
from memory_core.ledger.kinds import EVENT_KINDS
from memory_core.rules.names import is_valid_ref
from memory_core.rules.scopes import is_valid_scope

# The earliest `at` an export may be pinned to (nothing here is older than the epoch).
EARLIEST_AT = datetime(1970, 1, 1, tzinfo=UTC)


# An access-log action as the code names them (`remember`, `api_key.create`, `actor.erase.start`).
ACTION_RE = re.compile(r"^[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*$")


def _unknown_kind(kind: str) -> str:
    close = difflib.get_close_matches(kind, EVENT_KINDS, n=1)
    hint = f"; did you mean {close[0]}?" if close else " (the ledger page suggests them all)"
    return f"kind: {kind!r} is no event type the ledger records{hint}"


def _value_problems(values: dict, *, linked: bool) -> list[str]:
    """What a page applies as typed but an export refuses: a value no row can hold; and,
    sent by hand (not `linked` from the page, whose link leaves out the `since` a window
    overrides), a window and a since together."""
    problems = []
    if values.get("kind") and values["kind"] not in EVENT_KINDS:
        problems.append(_unknown_kind(values["kind"]))
    if values.get("scope") and not is_valid_scope(values["scope"]):
        problems.append(f"scope: {values['scope']!r} is not a scope token (e.g. team:acme/ops)")
    if values.get("actor") and not is_valid_ref(values["actor"]):
        problems.append(f"actor: {values['actor']!r} is not an actor ref (e.g. acme/u1)")
    if values.get("action") and not ACTION_RE.fullmatch(values["action"]):
        problems.append(f"action: {values['action']!r} is not an action (e.g. remember)")
    if values.get("window") and values.get("since") and not linked:
        problems.append("give either window or since, not both")
    return problems


def export_problem(form: forms.Form, *, linked: bool = False) -> str | None:
    """Why an export would refuse `form` (a page's filters, names read as its user types
    them; `linked`: as the page's link sends them), or None: a malformed value, one no row
    can hold, or an ambiguous name."""
    if not form.is_valid():
        problems = "; ".join(f"{name}: {' '.join(errors)}" for name, errors in form.errors.items())
        return f"malformed filter ({problems})"
    values = form.cleaned_data
    found = [*getattr(form, "name_problems", []), *_value_problems(values, linked=linked)]
    return "; ".join(found) or None


def strict(form: forms.Form) -> forms.Form:
    """`form` (a page's filters), every one of which must hold for an export."""
    problem = export_problem(form)
    if problem is not None:
        raise Invalid(problem)
    return form


def _as_sent(value) -> str:
    if isinstance(value, datetime):
        return value.astimezone(UTC).replace(tzinfo=None).isoformat()
    if value is True:
        return "on"
    return str(value)


def export_query(form: forms.Form) -> str:
    """The filters `form` applies, as its export's query string: names in their stored
    form, no paging cursor (an export holds every page), `since` left out where a window
    overrides it. An export of it selects exactly the page's rows."""
    form.is_valid()
    applied = {}
    for name in form.fields:
        value = form.cleaned_data.get(name)
        if value in (None, "", False) or (name == "since" and form.cleaned_data.get("window")):
            continue
        applied[name] = _as_sent(value)
    return urlencode(applied)


# The formats each page's export comes in: (label, format).
EXPORT_FORMATS = (("CSV", "csv"), ("JSON Lines", "jsonl"))


def export_offer(form: forms.Form, name: str) -> dict:
    """What a page (`name`: ledger or access) offers of its export: a link per format with
    the page's filters as applied (every page of its rows), or, when the export would refuse
    them, why."""
    problem = export_problem(form, linked=True)
    if problem is not None:
        return {"problem": problem, "links": []}
    query = export_query(form)
    suffix = f"?{query}" if query else ""
    links = [
        {"label": label, "href": reverse(f"console:export-{name}-{fmt}") + suffix}
        for label, fmt in EXPORT_FORMATS
    ]
    return {"problem": None, "links": links}


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


class StreamToken(Text):
    """A stream, named by its scope token (`global`, `tenant:acme`)."""

    def validate(self, value) -> None:
        super().validate(value)
        if value and not is_valid_scope(value):
            raise forms.ValidationError(f"stream: {value!r} is not a stream (e.g. tenant:acme)")


class LedgerRange(ActionForm):
    """A ledger export's own narrowing, beside the page's filters: one stream, a range of
    sequence numbers."""

    stream = StreamToken()
    seq_from = WholeNumber("seq_from")
    seq_to = WholeNumber("seq_to")
