"""An action's address answers a GET with the page the action belongs to.

A console action is a POST. Its address still ends up in the address bar (a 422 form
re-rendered there, a bookmark, a link pasted from the history), and a reload or a visit
then sends a GET: it is sent on (303) to the page the action is done from, never a bare
405. Other methods stay 405.
"""

from functools import wraps

from django.http import HttpResponseNotAllowed, HttpResponseRedirect
from django.urls import reverse

ALLOWED = ["GET", "HEAD", "POST"]


def post_only(page):
    """Decorate a POST-only view. `page` is a URL name (no arguments) or a function of the
    view's URL keyword arguments returning the address of the action's page."""

    def address(kwargs) -> str:
        return page(**kwargs) if callable(page) else reverse(page)

    def decorate(func):
        @wraps(func)
        def wrapped(request, *args, **kwargs):
            if request.method in ("GET", "HEAD"):
                response = HttpResponseRedirect(address(kwargs))
                response.status_code = 303  # See Other: the page, fetched with a GET
                return response
            if request.method != "POST":
                return HttpResponseNotAllowed(ALLOWED)
            return func(request, *args, **kwargs)

        return wrapped

    return decorate
