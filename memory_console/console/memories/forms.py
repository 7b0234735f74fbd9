"""What a person asks of a memory: one form per action of the memory page (views.py).
Republish and invalidate are also the conflicts page's inline decisions
(conflicts/views.py): their forms call the one memory_core service and say what happened
(`save`), for both pages."""

from django import forms

from memory_console.console.common.forms import ActionForm, Checkbox, TagsField, Text
from memory_core import curation, writes
from memory_core.models import Memory

CHOOSE_TARGET = "choose one of the wider scopes offered"


class CorrectForm(ActionForm):
    """The corrected text (a new human version; writes.correct checks it)."""

    text = Text()


class RepublishForm(ActionForm):
    """Republish at a wider scope: one of the memory's promotion targets, optionally with
    a new text and retiring the original."""

    target = forms.ChoiceField(
        error_messages={"required": CHOOSE_TARGET, "invalid_choice": CHOOSE_TARGET}
    )
    text = Text()
    retire_original = Checkbox()

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
        new = writes.promote(
            self.memory,
            target,
            principal=principal,
            text=values["text"] or None,
            retire_original=retire_original,
        )
        note = " The original is retired." if retire_original else ""
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
