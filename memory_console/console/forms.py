"""Parsing what the console's forms send. The services validate the facts themselves
(key shape, one line, length); these only turn form fields into arguments."""

import re
from datetime import date, datetime, timedelta

from django import forms
from django.core.validators import MaxValueValidator

from memory_console.console.parameters import MAX_PAGE, bounded_int
from memory_core.models import Author

PAGE_SIZE = 50


class MemoryFilter(forms.Form):
    """The scope page's filters. Unknown or malformed values are ignored, not errors:
    a filter link from a bookmark should still show the page."""

    author = forms.ChoiceField(
        required=False, choices=[("", "anyone"), (Author.HUMAN, "people"), (Author.AGENT, "agents")]
    )
    pinned = forms.ChoiceField(
        required=False, choices=[("", "pinned or not"), ("yes", "pinned"), ("no", "not pinned")]
    )
    tag = forms.CharField(required=False, max_length=40)
    q = forms.CharField(required=False, max_length=200, strip=True)

    def values(self) -> dict:
        self.is_valid()  # fills cleaned_data with the fields that are fine
        return {name: self.cleaned_data.get(name) or "" for name in self.fields}


# memory_core.conflicts.AUTHOR_COMBINATIONS, said the way the console says authors.
AUTHOR_COMBINATION_LABELS = {
    "agent>human": "agent over person",
    "agent>agent": "agent over agent",
    "human>human": "person over person",
    "human>agent": "person over agent",
}


class ConflictFilter(forms.Form):
    """The conflicts page's filters; like MemoryFilter, a bad value is ignored."""

    scope = forms.CharField(required=False, max_length=161, strip=True)
    authors = forms.ChoiceField(
        required=False, choices=[("", "any authors"), *AUTHOR_COMBINATION_LABELS.items()]
    )
    # The same value at two scopes is no conflict: such pairs are listed apart.
    show = forms.ChoiceField(
        required=False, choices=[("", "conflicts"), ("duplicates", "duplicates")]
    )

    def values(self) -> dict:
        self.is_valid()
        return {name: self.cleaned_data.get(name) or "" for name in self.fields}


def parse_tags(raw: str) -> list[str]:
    """`finance, policy` or `finance policy` -> ["finance", "policy"] (checked by the service)."""
    return [tag for tag in re.split(r"[\s,]+", raw or "") if tag]


def checked(data, name: str) -> bool:
    return data.get(name) in {"on", "1", "true", "yes"}


def page_number(raw) -> int:
    """A page number from the query: 1 for junk, at most MAX_PAGE (parameters.py)."""
    return bounded_int(raw, minimum=1, maximum=MAX_PAGE) or 1


# --- The ledger and access-log pages ----------------------------------------------------

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
# The statuses that mean "refused" (CONSOLE.md): highlighted, countable, filterable.
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


# --- The memory finder (/memories/) ------------------------------------------------------

SCOPE_KINDS = ["global", "tenant", "team", "actor"]
MEMORY_STATES = ["live", "superseded", "invalidated", "expired", "any"]
FINDER_SORTS = {"new": "newest first", "old": "oldest first", "key": "key"}


class FinderFilter(forms.Form):
    """The finder's query parameters (CONSOLE.md, "Addresses"); a bad value is ignored."""

    q = forms.CharField(required=False, max_length=200, strip=True)
    scope = forms.CharField(required=False, max_length=161, strip=True)
    # Kinds are open (memory_core/rules/scopes.py KIND_PATTERN); SCOPE_KINDS are suggestions.
    kind = forms.RegexField(required=False, regex=r"^(global|[a-z][a-z0-9_-]{0,31})$")
    author = MemoryFilter.base_fields["author"]
    state = forms.ChoiceField(required=False, choices=[(s, s) for s in MEMORY_STATES])
    pinned = MemoryFilter.base_fields["pinned"]
    tag = forms.CharField(required=False, max_length=40, strip=True)
    since = forms.DateField(required=False)
    # `until` is a day included whole: the day after it must exist.
    until = forms.DateField(
        required=False, validators=[MaxValueValidator(date.max - timedelta(days=1))]
    )
    sort = forms.ChoiceField(required=False, choices=list(FINDER_SORTS.items()))

    def values(self) -> dict:
        self.is_valid()
        values = {name: self.cleaned_data.get(name) or "" for name in self.fields}
        values["state"] = values["state"] or "live"
        values["sort"] = values["sort"] or "new"
        return values


class ActorSearch(forms.Form):
    """The actor search's parameters; a bad value is ignored."""

    q = forms.CharField(required=False, max_length=128, strip=True)
    tenant = forms.CharField(required=False, max_length=128, strip=True)
    team = forms.CharField(required=False, max_length=161, strip=True)

    def values(self) -> dict:
        self.is_valid()
        return {name: self.cleaned_data.get(name) or "" for name in self.fields}
