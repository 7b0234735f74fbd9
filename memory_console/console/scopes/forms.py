"""The scopes pages' parameters and the publish form."""

from django import forms

from memory_console.console.common.forms import (
    AUTHOR_CHOICES,
    PINNED_CHOICES,
    ActionForm,
    Bounded,
    Checkbox,
    Filter,
    TagsField,
    Text,
)


class TreeFilter(Filter):
    """The scopes page: `?q=` searches by name instead of showing the tree; `?open=<token>`
    shows that scope's subtree under it."""

    q = Bounded(200)
    open = Text(strip=False)


class MemoryFilter(Filter):
    """The scope page's filters. Unknown or malformed values are ignored, not errors:
    a filter link from a bookmark should still show the page."""

    author = forms.ChoiceField(required=False, choices=AUTHOR_CHOICES)
    pinned = forms.ChoiceField(required=False, choices=PINNED_CHOICES)
    tag = forms.CharField(required=False, max_length=40)
    q = forms.CharField(required=False, max_length=200, strip=True)


class PublishForm(ActionForm):
    """ "Publish a memory here": the key and the text are checked by writes.publish."""

    key = Text()
    text = Text()
    pinned = Checkbox()
    tags = TagsField()
