"""The 503 answers of memory_console/unavailable.py, without a server or a database.

The fault tests show them against a real crash; these pin down which database errors are a
503 (unavailable, or a deadlock worth retrying) and which stay a 500.
"""

import psycopg
import pytest
from django.conf import settings
from django.db import IntegrityError, InterfaceError, OperationalError
from django.test import Client, RequestFactory

from memory_console import unavailable

pytestmark = pytest.mark.reliability


def wrapped(cause: Exception | None) -> OperationalError:
    """A Django OperationalError as DatabaseErrorWrapper raises it: `from` the driver's."""
    error = OperationalError(str(cause) if cause else "connection refused")
    error.__cause__ = cause
    return error


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (wrapped(None), unavailable.UNAVAILABLE),
        (wrapped(psycopg.OperationalError("connection to server failed")), unavailable.UNAVAILABLE),
        (wrapped(psycopg.errors.AdminShutdown("terminating")), unavailable.UNAVAILABLE),
        (wrapped(psycopg.errors.CannotConnectNow("starting up")), unavailable.UNAVAILABLE),
        (wrapped(psycopg.errors.TooManyConnections("too many")), unavailable.UNAVAILABLE),
        (InterfaceError("connection already closed"), unavailable.UNAVAILABLE),
        (wrapped(psycopg.errors.DeadlockDetected("deadlock")), unavailable.TRANSIENT),
        (wrapped(psycopg.errors.SerializationFailure("serialize")), unavailable.TRANSIENT),
        (wrapped(psycopg.errors.QueryCanceled("timeout")), None),
        (IntegrityError("duplicate key"), None),
        (ValueError("not a database error"), None),
    ],
)
def test_which_errors_are_a_503(error, kind):
    assert unavailable.classify(error) == kind


def test_console_gets_a_plain_503_page_and_the_api_json():
    middleware = unavailable.DatabaseUnavailableMiddleware(lambda request: None)
    factory = RequestFactory()

    page = middleware.process_exception(factory.get("/scopes/"), wrapped(None))
    assert page.status_code == 503
    assert page["Content-Type"].startswith("text/html")
    assert page["Retry-After"] == unavailable.RETRY_AFTER
    assert b"Traceback" not in page.content and b"cannot reach its database" in page.content

    api = middleware.process_exception(factory.get("/api/v1/memories"), wrapped(None))
    assert api.status_code == 503 and api["Content-Type"] == "application/json"

    assert middleware.process_exception(factory.get("/"), IntegrityError("x")) is None


def test_the_middleware_is_installed_last():
    assert settings.MIDDLEWARE[-1] == "memory_console.unavailable.DatabaseUnavailableMiddleware"


def test_a_console_view_losing_its_database_is_a_503(monkeypatch):
    """Through Django's whole stack (no database needed: the view fails before using it)."""
    from django.contrib.auth import views

    def fail(self, request, *args, **kwargs):
        raise wrapped(psycopg.OperationalError("server closed the connection unexpectedly"))

    monkeypatch.setattr(views.LoginView, "get", fail)
    response = Client(raise_request_exception=False).get("/login/")
    assert response.status_code == 503
    assert response["Content-Type"].startswith("text/html")
    assert b"Temporarily unavailable" in response.content
