"""The one shape of an htmx action's answer: a refusal or a bad value comes back inside
the fragment the form swaps (status 200: htmx swaps no 4xx by default), and an htmx request
whose session ended is sent to the login page with HX-Redirect. Used by the memory page's
actions, the conflicts page's inline decisions and the actor page's erasure.
"""

from functools import wraps
from typing import NamedTuple

from django.contrib.auth.views import redirect_to_login
from django_htmx.http import HttpResponseClientRedirect

from memory_console.console.common.access import STATUS_TITLES, console_view
from memory_console.console.common.forms import NextPage
from memory_console.console.common.methods import post_only
from memory_console.console.common.rendering import wants_fragment
from memory_core.errors import DomainError


class Notice(NamedTuple):
    """An action's result shown inside the swapped fragment (_action_notice.html)."""

    level: str  # "success" or "error", as the flash message classes
    text: str


def safe_next(request) -> str | None:
    """The `next` the form posted (a list page sends its own address), if it stays on this
    host (common/forms.NextPage)."""
    return NextPage(request).target()


def error_text(error: DomainError, *, readable: bool) -> str:
    status = error.status if error.status in STATUS_TITLES else 400
    title = STATUS_TITLES.get(status, "Refused")
    if status == 404 and not readable:
        # Beyond the grants, or forgotten meanwhile: say no more than the 404 page does.
        return f"{title}: nothing here, or nothing you may see."
    text = f"{title}: {error.message}"
    if status == 403:
        text = text.rstrip(".") + ". This attempt has been recorded in the access log."
    return text


def htmx_action(*, page, refused, invalid=None):
    """console_view (login, refusals as pages) for a POST-only action, plus htmx's answers.

    Inside it, a DomainError of an htmx request becomes `refused(request, error, **kwargs)`
    (a fragment, status 200); a plain POST's goes on to console_view unchanged (`invalid`
    answers its bad values). Outside it, an htmx request whose session has ended is sent to
    the login page with HX-Redirect, back to the page it was sent from: login_required's
    302 would be followed by the browser and the login page swapped into the fragment.
    A GET is sent on to `page` (methods.post_only).
    """

    def decorate(func):
        @wraps(func)
        def fragments(request, **kwargs):
            try:
                return func(request, **kwargs)
            except DomainError as error:
                if not wants_fragment(request):
                    raise
                return refused(request, error, **kwargs)

        guarded = console_view(fragments, invalid=invalid)

        @post_only(page)
        @wraps(func)
        def wrapped(request, **kwargs):
            if wants_fragment(request) and not request.user.is_authenticated:
                page = request.htmx.current_url_abs_path or request.path
                return HttpResponseClientRedirect(redirect_to_login(page).url)
            return guarded(request, **kwargs)

        return wrapped

    return decorate
