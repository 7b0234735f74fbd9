"""Template helpers for the console's pages (`{% load console %}`)."""

from django import template

from memory_console.console import links

register = template.Library()


@register.filter
def scope_name(token: str) -> str:
    """`ops` for `team:ops`; `global` for `global`: the part a chip shows beside its kind."""
    return token.split(":", 1)[1] if ":" in token else token


@register.filter
def scope_kind(token: str) -> str:
    """`team` for `team:ops`; `global` for `global` (the chip's colour and label)."""
    return token.split(":", 1)[0] if ":" in token else token


@register.simple_tag
def actor_url(ref: str) -> str:
    return links.actor_path(ref)


@register.simple_tag
def scope_url(token: str) -> str:
    return links.scope_path(token)


@register.simple_tag
def run_url(actor_ref: str, run_id: str) -> str:
    return links.run_path(actor_ref, run_id)


@register.simple_tag
def thread_url(thread_id: str, actor_ref: str | None = None, run: str | None = None) -> str:
    return links.thread_path(thread_id, actor_ref, run)
