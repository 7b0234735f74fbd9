"""Template helpers for the console's pages (`{% load console %}`)."""

from django import template

register = template.Library()


@register.filter
def scope_name(token: str) -> str:
    """`ops` for `team:ops`; `global` for `global`: the part a chip shows beside its kind."""
    return token.split(":", 1)[1] if ":" in token else token


@register.filter
def scope_kind(token: str) -> str:
    """`team` for `team:ops`; `global` for `global` (the chip's colour and label)."""
    return token.split(":", 1)[0] if ":" in token else token
