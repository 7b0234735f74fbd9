"""The finder's filters, and the bulk action's form (the finder's and the scope page's
selections post to it)."""

from datetime import date, timedelta

from django import forms
from django.core.validators import MaxValueValidator

from memory_console.console.common.forms import (
    AUTHOR_CHOICES,
    PINNED_CHOICES,
    ActionForm,
    Filter,
    Strings,
    Text,
)
from memory_core.models import Memory

SCOPE_KINDS = ["global", "tenant", "team", "actor"]
MEMORY_STATES = ["live", "superseded", "invalidated", "expired", "any"]
FINDER_SORTS = {"new": "newest first", "old": "oldest first", "key": "key"}

# How the finder and the scope page name memory_core.bulk's actions.
BULK_LABELS = {
    "pin": "Pin",
    "unpin": "Unpin",
    "invalidate": "Invalidate",
    "republish": "Republish wider",
    "forget": "Forget",
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


class BulkForm(ActionForm):
    """A bulk action: the action and the selected memories (`m`, checked by
    memory_core.bulk.check_batch); sent back with `confirm`, what the action needs
    (confirmation_problem). The reason and the scope go to the services as sent."""

    action = Text(strip=False)
    m = Strings()
    confirm = Text(strip=False)
    typed = Text()
    reason = Text(strip=False)
    target = Text(strip=False)

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
