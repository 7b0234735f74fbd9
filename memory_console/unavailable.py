"""While the database cannot serve a request, answer 503 instead of Django's 500 page.

The API's own exception handler (memory_console/api/__init__.py) already turns an
OperationalError raised inside an operation into a JSON 503. This middleware covers the
rest: the console's views (a logged-in page, the login form) and any database error the
API's handlers do not map.

Two kinds of failure are a 503, both "try again shortly", neither leaving anything
half-written (PostgreSQL rolled the transaction back; a message whose connection failed at
its commit is looked up first, memory_core/db/outcome.py, and answered 504 when the
database cannot say):

- unavailable: no connection (refused, lost mid-query, the pool's PoolTimeout, which Django
  wraps as OperationalError), the server shutting down or starting, out of connections;
- transient: a deadlock or serialization failure. These are logged with their traceback at
  ERROR: a deadlock means two code paths take locks in different orders, a bug to fix.

Any other database error is not ours to excuse and stays a 500.

The page is self-contained: rendering base.html would consult the session and the user,
which live in the database that just failed.
"""

import logging

from django.db import InterfaceError, OperationalError
from django.http import HttpResponse, JsonResponse

logger = logging.getLogger(__name__)

RETRY_AFTER = "5"
UNAVAILABLE = "the database is unavailable; try again shortly"
TRANSIENT = "the database could not complete this request (a conflict); try again"
# A 504, not a 503: the write may be stored (memory_core/db/outcome.py).
OUTCOME_UNKNOWN = (
    "the database did not confirm this write in time; it may have been stored: "
    "look before sending it again"
)

PAGE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Temporarily unavailable</title></head>
<body>
<h1>Temporarily unavailable</h1>
<p>{message}</p>
<p>Try again in a few seconds. If you had just sent a change, look whether it was saved
before sending it again.</p>
</body>
</html>
"""
PAGE_MESSAGES = {
    UNAVAILABLE: "Memory Console cannot reach its database right now.",
    TRANSIENT: "The database could not complete this request because of a conflicting one.",
}


def sqlstate(error) -> str | None:
    """The SQLSTATE of the driver error behind a Django database error, if it has one."""
    cause = error.__cause__ or error.__context__
    return getattr(cause, "sqlstate", None)


def classify(error) -> str | None:
    """UNAVAILABLE, TRANSIENT, or None for an error that is not a reason to retry."""
    if isinstance(error, InterfaceError):
        return UNAVAILABLE
    if not isinstance(error, OperationalError):
        return None
    state = sqlstate(error)
    # No SQLSTATE: the client side failed (connect refused, connection lost, PoolTimeout).
    # 08: connection exception; 57P01-03: shutdown, crash, starting; 53: out of resources.
    # 25006: a read-only transaction, i.e. a connection to a primary that was demoted (high
    # availability): the pool drops it, the next request reaches the new primary.
    if (
        state is None
        or state.startswith(("08", "53"))
        or state in {"57P01", "57P02", "57P03", "25006"}
    ):
        return UNAVAILABLE
    if state.startswith("40"):  # 40001 serialization failure, 40P01 deadlock
        return TRANSIENT
    return None


def unavailable_response(request, kind: str = UNAVAILABLE):
    if request.path.startswith("/api/"):
        response = JsonResponse({"detail": kind}, status=503)
    else:
        response = HttpResponse(
            PAGE.format(message=PAGE_MESSAGES[kind]),
            status=503,
            content_type="text/html; charset=utf-8",
        )
    response["Retry-After"] = RETRY_AFTER
    response["Cache-Control"] = "no-store"
    return response


class DatabaseUnavailableMiddleware:
    """Last in MIDDLEWARE, so its process_exception sees a view's exception first."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        kind = classify(exception)
        if kind is None:
            return None
        if kind == TRANSIENT:
            logger.error(
                "database conflict on %s %s (answered 503)",
                request.method,
                request.path,
                exc_info=exception,
            )
        else:
            logger.warning(
                "database unavailable on %s %s: %s", request.method, request.path, exception
            )
        return unavailable_response(request, kind)
