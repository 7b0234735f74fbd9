"""The finder's filters, and the bulk action's forms: the review of a selection (the finder's
and the scope page's), and its confirmation."""

from datetime import date, timedelta

from django import forms
from django.core.validators import MaxValueValidator

from memory_console.console.common.forms import (
    AUTHOR_CHOICES,
    PINNED_CHOICES,
    ActionForm,
    Checkbox,
    Filter,
    Strings,
    Text,
)
from memory_core.models import Memory

SCOPE_KINDS = ["global", "tenant", "team", "actor"]
MEMORY_STATES = ["live", "superseded", "invalidated", "expired", "any"]
FINDER_SORTS = {"new": "newest first", "old": "oldest first", "key": "key"}

# How the finder and the scope page name memory_core.bulk's actions on live memories ...
BULK_LABELS = {
    "pin": "Pin",
    "unpin": "Unpin",
    "invalidate": "Invalidate",
    "republish": "Republish wider",
    "forget": "Forget",
}
# ... and the finder's, which also lists invalidated ones; and how a report names an undo.
FINDER_BULK_LABELS = {**BULK_LABELS, "reinstate": "Reinstate (invalidated ones)"}
REPORT_LABELS = {**BULK_LABELS, "reinstate": "Reinstate", "undo": "Undo"}
# What the finder's bulk form applies the action to: the ticked rows, every row of the
# page shown, or every match of the filters (the first memory_core.bulk.MAX_BATCH).
SELECTIONS = ("ticked", "page", "matches")
# The republished memories' pin (memory_core.bulk.PIN_CHOICES), as the forms say it.
PIN_LABELS = {
    "original": "as each original is (default)",
    "yes": "pin every one",
    "no": "pin none",
}


class FinderFilter(Filter):
    """The finder's query parameters (docs/administrators/console.md, "Addresses"); a bad value is
    ignored."""

    q = forms.CharField(required=False, max_length=200, strip=True)
    scope = forms.CharField(required=False, max_length=161, strip=True)
    # Kinds are open (memory_core/rules/scopes.py KIND_PATTERN); SCOPE_KINDS are suggestions.
    kind = forms.RegexField(required=False, regex=r"^(global|[a-z][a-z0-9_-]{0,31})$")
    author = forms.ChoiceField(required=False, choices=AUTHOR_CHOICES)
    state = forms.ChoiceField(required=False, choices=[(s, s) for s in MEMORY_STATES])
    pinned = forms.ChoiceField(required=False, choices=PINNED_CHOICES)
    tag = forms.CharField(required=False, max_length=40, strip=True)
    since = forms.DateField(required=False)
    # `until` is a day included whole: the day after it must exist.
    until = forms.DateField(
        required=False, validators=[MaxValueValidator(date.max - timedelta(days=1))]
    )
    sort = forms.ChoiceField(required=False, choices=list(FINDER_SORTS.items()))

    def values(self) -> dict:
        values = super().values()
        values["state"] = values["state"] or "live"
        values["sort"] = values["sort"] or "new"
        return values


class BackTo(Filter):
    """`next`: the page a bulk page links back to (kept only when it is on this host)."""

    next = forms.CharField(required=False, max_length=2000)


class BulkSelection(BackTo):
    """The review of a bulk action (a GET, reloadable): the action, and what it applies to
    — the ticked ids `m`, or (`select`) the rows of finder `page`, or every match of the
    finder's filters, which the same query string carries."""

    action = forms.CharField(required=False)
    m = Strings()
    select = forms.ChoiceField(required=False, choices=[(s, s) for s in SELECTIONS])
    page = forms.IntegerField(required=False, min_value=1, max_value=10_000)


class BulkForm(ActionForm):
    """A bulk action, confirmed: the action and the selected memories (`m`, checked by
    memory_core.bulk.check_batch), with what the action needs (confirmation_problem). The
    reason and the scope go to the services as sent; a republish says how the new memories
    are pinned (`pin`, as each original by default) and whether the originals are
    retired (ticked by default on the page, as on a memory's own republish form)."""

    action = Text(strip=False)
    m = Strings()
    confirm = Text(strip=False)
    typed = Text()
    reason = Text(strip=False)
    target = Text(strip=False)
    pin = forms.ChoiceField(
        required=False,
        choices=[("", "")] + list(PIN_LABELS.items()),
        error_messages={"invalid_choice": "choose how the republished memories are pinned"},
    )
    retire_original = Checkbox()

    def confirmation_problem(self, action: str, memories: list[Memory]) -> str:
        """What the confirmation page still lacks, or "" when it may run."""
        values = self.cleaned()
        if not memories:
            return "none of the selected memories can be found"
        if action == "forget" and values["typed"] != str(len(memories)):
            return f"type {len(memories)} (how many memories) to forget them"
        if action == "invalidate" and not values["reason"].strip():
            return "say why the memories are invalid"
        if action == "republish" and not values["target"].strip():
            return "choose the scope to republish at"
        return ""
