"""What the console's forms share. Every page's filters and every action's input is a Django
form, in the forms.py of its area; the two kinds fail differently:

- a filter (a `Filter`, read from the query string) ignores a malformed value: a filter
  link from a bookmark should still show the page;
- an action's input (an `ActionForm`, read from the POST) turns a bad value into Invalid
  with the field's message (`cleaned()`), which console_view answers as it answers the
  services' own: the page again with the message beside the form (422), or the htmx
  fragment with the message inside.

The services validate the facts themselves (key shape, one line, length): an action's form
turns fields into arguments and refuses only what no service could be asked. What no field
may hold at all (a NUL, bytes that are not UTF-8, an oversized value) was refused with a 400
before any form saw it (common/parameters.py).
"""

import re

from django import forms
from django.utils.http import url_has_allowed_host_and_scheme

from memory_console.console.common.parameters import MAX_PAGE, bounded_int
from memory_core.errors import Invalid
from memory_core.models import Author

PAGE_SIZE = 50

AUTHOR_CHOICES = [("", "anyone"), (Author.HUMAN, "people"), (Author.AGENT, "agents")]
PINNED_CHOICES = [("", "pinned or not"), ("yes", "pinned"), ("no", "not pinned")]


def page_number(raw) -> int:
    """A page number from the query: 1 for junk, at most MAX_PAGE (parameters.py)."""
    return bounded_int(raw, minimum=1, maximum=MAX_PAGE) or 1


class Filter(forms.Form):
    """A page's filters: unknown or malformed values are ignored, not errors."""

    def values(self) -> dict:
        self.is_valid()  # fills cleaned_data with the fields that are fine
        return {name: self.cleaned_data.get(name) or "" for name in self.fields}


class ActionForm(forms.Form):
    """An action's input: a bad value is Invalid, with its field's message."""

    def cleaned(self) -> dict:
        """The fields as arguments; Invalid with the first field's message if one is bad."""
        if not self.is_valid():
            raise Invalid(next(iter(self.errors.values()))[0])
        return self.cleaned_data


class Text(forms.CharField):
    """Text as the console reads it: optional, stripped unless `strip=False` (the service
    then sees what was typed), with no limits of its own (the services have them)."""

    def __init__(self, **options):
        super().__init__(required=False, **options)


class Bounded(Text):
    """Text cut to `limit` characters (after stripping, unless `strip=False`)."""

    def __init__(self, limit: int, **options):
        super().__init__(**options)
        self.limit = limit

    def to_python(self, value) -> str:
        return super().to_python(value)[: self.limit]


class _Sent(forms.Widget):
    """The value as sent (the last, when a field is sent twice), whatever it is."""

    def value_from_datadict(self, data, files, name):
        return data.get(name)


class Checkbox(forms.Field):
    """A ticked box is sent as on, 1, true or yes; anything else, or nothing, is unticked.
    (A BooleanField would take "no" or "off" as ticked.)"""

    widget = _Sent
    TICKED = frozenset({"on", "1", "true", "yes"})

    def __init__(self, **options):
        super().__init__(required=False, **options)

    def to_python(self, value) -> bool:
        return value in self.TICKED


class TagsField(forms.CharField):
    """`finance, policy` or `finance policy` -> ["finance", "policy"] (checked by the service)."""

    def __init__(self, **options):
        super().__init__(required=False, **options)

    def to_python(self, value) -> list[str]:
        return [tag for tag in re.split(r"[\s,]+", super().to_python(value)) if tag]


class Strings(forms.Field):
    """Every value sent for the name (checkboxes of a selection), in order."""

    widget = forms.MultipleHiddenInput

    def __init__(self, **options):
        super().__init__(required=False, **options)

    def to_python(self, value) -> list[str]:
        return list(value or [])


class NextPage(forms.Form):
    """Where an action sends the browser back to: the `next` a list page posts (its own
    address), kept only when it stays on this host (`next` comes from the request)."""

    next = Text(strip=False)

    def __init__(self, request):
        super().__init__(request.POST)
        self.request = request

    def target(self) -> str | None:
        self.is_valid()
        target = self.cleaned_data.get("next", "")
        if target and url_has_allowed_host_and_scheme(
            target,
            allowed_hosts={self.request.get_host()},
            require_https=self.request.is_secure(),
        ):
            return target
        return None
