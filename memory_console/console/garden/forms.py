"""The garden's filters and its decisions' forms (memory_core.garden.decisions checks what
they carry)."""

from django import forms

from memory_console.console.common.forms import ActionForm, Checkbox, Filter, Strings, Text
from memory_core.models import ProposalKind, ProposalState


class GardenFilter(Filter):
    """`?state=` (open unless another is chosen) and `?kind=`; anything else is ignored."""

    state = forms.ChoiceField(required=False, choices=ProposalState.choices)
    kind = forms.ChoiceField(required=False, choices=ProposalKind.choices)

    def values(self) -> dict:
        values = super().values()
        values["state"] = values["state"] or ProposalState.OPEN
        return values


class ApproveForm(ActionForm):
    """Approving a proposal: whether to retire the copies a promotion replaces, which live
    value at its scope it may replace (the version's id, from the "replace the current
    value" box; without it the service refuses to replace one), how a conflict is resolved
    (invalidate unless said), and a text where one is asked for."""

    retire_copies = Checkbox()
    replace = Text()
    resolution = Text(strip=False)
    text = Text(strip=False)

    def clean_resolution(self) -> str:
        # Not sent at all: the usual resolution. Sent empty: the service refuses it.
        if "resolution" not in self.data:
            return "invalidate"
        return self.cleaned_data["resolution"]


class DismissForm(ActionForm):
    """Why the proposal is dismissed (as typed)."""

    reason = Text(strip=False)


class BulkApproveForm(ActionForm):
    """The proposals ticked on the list."""

    ids = Strings()


class BackTo(forms.Form):
    """`next`: the garden page a decision was taken from (a list, filtered as it was), to go
    back to; anything that is not a garden address is ignored."""

    next = Text(strip=False)

    def target(self) -> str | None:
        self.is_valid()
        target = self.cleaned_data.get("next", "")
        return target if target.startswith("/garden/") and "//" not in target else None
