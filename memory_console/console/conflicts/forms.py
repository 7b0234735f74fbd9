"""The conflicts page's filters. Its inline decisions (republish the narrower value wider,
invalidate it) take the memory page's forms (memories/forms.py)."""

from django import forms

from memory_console.console.common.forms import Filter

# memory_core.conflicts.AUTHOR_COMBINATIONS, said the way the console says authors.
AUTHOR_COMBINATION_LABELS = {
    "agent>human": "agent over person",
    "agent>agent": "agent over agent",
    "human>human": "person over person",
    "human>agent": "person over agent",
}


class ConflictFilter(Filter):
    """The conflicts page's filters; a bad value is ignored."""

    scope = forms.CharField(required=False, max_length=161, strip=True)
    authors = forms.ChoiceField(
        required=False, choices=[("", "any authors"), *AUTHOR_COMBINATION_LABELS.items()]
    )
    # The same value at two scopes is no conflict: such pairs are listed apart.
    show = forms.ChoiceField(
        required=False, choices=[("", "conflicts"), ("duplicates", "duplicates")]
    )
