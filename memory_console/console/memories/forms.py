"""What a person asks of a memory: one form per action of the memory page (views.py).
Republish and invalidate are also the conflicts page's inline decisions
(conflicts/views.py): their forms call the one memory_core service and say what happened
(`save`), for both pages."""

from datetime import UTC, datetime, time

from django import forms
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from memory_console.console.common.forms import ActionForm, Checkbox, TagsField, Text
from memory_core import curation, writes
from memory_core.models import Memory

CHOOSE_TARGET = "choose one of the wider scopes offered"


class CorrectForm(ActionForm):
    """The corrected text (a new human version; writes.correct checks it)."""

    text = Text()


class RepublishForm(ActionForm):
    """Republish at a wider scope: one of the memory's promotion targets, optionally with
    a new text and retiring the original, pinned there or not (`pin`; when not sent, as
    the original is: the default the forms state)."""

    target = forms.ChoiceField(
        error_messages={"required": CHOOSE_TARGET, "invalid_choice": CHOOSE_TARGET}
    )
    text = Text()
    retire_original = Checkbox()
    pin = forms.ChoiceField(
        required=False,
        choices=[("", ""), ("yes", "pinned"), ("no", "not pinned")],
        error_messages={"invalid_choice": "choose whether it is pinned at the wider scope"},
    )

    def __init__(self, data, *, memory: Memory):
        super().__init__(data)
        self.memory = memory
        self.targets = {scope.token: scope for scope in writes.promotion_targets(memory)}
        self.fields["target"].choices = [(token, token) for token in self.targets]

    def clean_target(self):
        return self.targets[self.cleaned_data["target"]]

    def save(self, principal) -> tuple[Memory, str]:
        """writes.promote: the new memory, and what to say."""
        values = self.cleaned()
        target, retire_original = values["target"], values["retire_original"]
        pinned = self.memory.pinned if not values["pin"] else values["pin"] == "yes"
        new = writes.promote(
            self.memory,
            target,
            principal=principal,
            text=values["text"] or None,
            retire_original=retire_original,
            pinned=pinned,
        )
        note = " Pinned there." if new.pinned else ""
        if retire_original:
            note += " The original is retired."
        return new, f"Republished at {target.token} as {new.uid}.{note}"


class InvalidateForm(ActionForm):
    """Why the memory is invalid (sent to curation.invalidate as typed)."""

    reason = Text(strip=False)

    def __init__(self, data, *, memory: Memory):
        super().__init__(data)
        self.memory = memory

    def save(self, principal) -> str:
        """curation.invalidate, and what to say."""
        curation.invalidate(self.memory, self.cleaned()["reason"], principal=principal)
        return "Invalidated: it no longer reaches any prompt."


class RevertForm(ActionForm):
    """The earlier version whose text comes back (access.memory_in_lineage finds it)."""

    version = Text(strip=False)


class TagsForm(ActionForm):
    tags = TagsField()


class ForgetForm(ActionForm):
    """Typing the key is the console's confirmation that the person means this memory;
    a wrong key changes nothing."""

    confirm_key = Text()

    def __init__(self, data, *, memory: Memory):
        super().__init__(data)
        self.memory = memory

    def clean_confirm_key(self):
        if self.cleaned_data["confirm_key"] != self.memory.key:
            raise forms.ValidationError(
                "type the memory's key exactly to confirm; nothing was forgotten"
            )
        return self.cleaned_data["confirm_key"]


class ExpiryForm(ActionForm):
    """When the memory stops reaching prompts: a date and time in UTC, as the page shows
    times (`2030-01-31T09:00`, what a datetime-local input sends; seconds and an offset
    are accepted, and a date alone is the start of that day). curation.set_expiry refuses
    a time that is not in the future."""

    expires_at = Text()

    def clean_expires_at(self) -> datetime:
        value = self.cleaned_data["expires_at"]
        if not value:
            raise forms.ValidationError("give the date and time the memory expires")
        try:
            moment = parse_datetime(value)
            day = None if moment else parse_date(value)
        except ValueError:
            moment = day = None
        if moment is None and day is not None:
            moment = datetime.combine(day, time.min)
        if moment is None:
            raise forms.ValidationError(
                "the expiry must be a date and time (YYYY-MM-DD HH:MM, UTC)"
            )
        return timezone.make_aware(moment, UTC) if timezone.is_naive(moment) else moment
