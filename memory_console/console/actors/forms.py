"""The actor search's parameters, the actor page's block preview, and the erasure's
confirmation."""

from django import forms

from memory_console.console.common.forms import ActionForm, Filter, Text


class ActorSearch(Filter):
    """The actor search's parameters; a bad value is ignored."""

    q = forms.CharField(required=False, max_length=128, strip=True)
    tenant = forms.CharField(required=False, max_length=128, strip=True)
    team = forms.CharField(required=False, max_length=161, strip=True)


class PreviewQuery(Filter):
    """`?q=`: the query whose block the preview shows, as typed (preview_turn checks it)."""

    q = Text(strip=False)


class EraseForm(ActionForm):
    """Typing the ref is the console's confirmation that the person means this actor; a
    wrong ref changes nothing."""

    confirm_ref = Text()

    def __init__(self, data, *, ref: str):
        super().__init__(data)
        self.ref = ref

    def clean_confirm_ref(self):
        if self.cleaned_data["confirm_ref"] != self.ref:
            raise forms.ValidationError(
                "type the actor's ref exactly to confirm; nothing was erased"
            )
        return self.cleaned_data["confirm_ref"]
