"""One view, two answers: an htmx request gets the fragment, a normal request the page."""

from django.shortcuts import render
from django.utils.cache import patch_vary_headers


def wants_fragment(request) -> bool:
    # A history restore (back button after the cache was evicted) needs the whole page.
    htmx = getattr(request, "htmx", None)
    return bool(htmx) and not htmx.history_restore_request


def render_page(request, page: str, context: dict, *, fragment: str | None = None, status=200):
    template = fragment if fragment is not None and wants_fragment(request) else page
    response = render(request, template, context, status=status)
    # The same URL answers with a fragment or a page: caches must key on HX-Request.
    patch_vary_headers(response, ("HX-Request",))
    return response
