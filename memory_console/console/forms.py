"""Parsing what the console's forms send. The services validate the facts themselves
(key shape, one line, length); these only turn form fields into arguments."""

import re

from django import forms

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


def parse_tags(raw: str) -> list[str]:
    """`finance, policy` or `finance policy` -> ["finance", "policy"] (checked by the service)."""
    return [tag for tag in re.split(r"[\s,]+", raw or "") if tag]


def checked(data, name: str) -> bool:
    return data.get(name) in {"on", "1", "true", "yes"}


def page_number(raw) -> int:
    try:
        return max(1, int(raw))
    except (TypeError, ValueError):
        return 1
