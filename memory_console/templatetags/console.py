"""Template helpers for the console's pages (`{% load console %}`)."""

from django import template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from memory_console.console.common import links
from memory_console.console.ledger import payloads

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
def scope_chip(token: str, nolink: bool = False) -> str:
    """A scope token with its kind made visible: `{% scope_chip token %}`, a link to the
    scope's page; `nolink=True` for plain text. A tag rather than an included template: the
    scope tree and the conflicts page render hundreds of chips, and an include per chip was
    most of their rendering time."""
    kind = scope_kind(token)
    name = (
        ""
        if token == "global"
        else format_html('<span class="chip-id">{}</span>', scope_name(token))
    )
    if nolink:
        return format_html(
            '<span class="chip chip-{}" title="{}"><span class="chip-kind">{}</span>{}</span>',
            kind,
            token,
            kind,
            name,
        )
    return format_html(
        '<a class="chip chip-{}" href="{}" title="{}"><span class="chip-kind">{}</span>{}</a>',
        kind,
        links.scope_path(token),
        token,
        kind,
        name,
    )


@register.simple_tag
def reach_options(scopes, selected: str = "") -> str:
    """The <option>s of a reach select, one per scope (`token — label`), `selected` marked.
    A tag rather than a template loop: a superuser's key form at 1m offers 1,201 scopes,
    and the loop was most of the keys page's time."""
    chosen = mark_safe(" selected")
    return format_html_join(
        "",
        '<option value="{}"{}>{}{}</option>',
        (
            (
                s.token,
                chosen if s.token == selected else "",
                s.token,
                f" — {s.label}" if s.label else "",
            )
            for s in scopes
        ),
    )


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


@register.filter
def payload_fields(event) -> list[dict]:
    """A ledger event's payload as the page shows it (console/ledger/payloads.py): as its
    view marked it, or, unmarked, with no memory linked (a link might lead to a 404)."""
    shown = getattr(event, "shown_payload", None)
    return shown if shown is not None else payloads.payload_fields(event)
