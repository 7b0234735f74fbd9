"""A request id for every request: in the logs, in the access-log row, in the response.

RequestIdMiddleware (first in MIDDLEWARE) takes the client's or proxy's `X-Request-ID` when
it is sane (1-64 characters of letters, digits and `-_.:`), otherwise makes one (32 hex
digits); it is echoed in the response's `X-Request-ID`, carried by every log line written
while the request runs (RequestIdFilter, JsonFormatter), and stored in the access-log row
(memory_core.ledger.access_log reads current()). It also times the request for the metrics
(memory_console/metrics.py), under its route's name, never its raw path.
"""

import json
import logging
import re
import time
import uuid
from datetime import UTC, datetime

from memory_core.ledger import access_log

HEADER = "X-Request-ID"
META_KEY = "HTTP_X_REQUEST_ID"
SANE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")

# The one context variable, kept by the core so that the access-log row can read it.
_current = access_log.REQUEST_ID


def current() -> str | None:
    """The id of the request this code runs for; None outside a request (a command)."""
    return _current.get()


def accepted(value: str | None) -> str | None:
    """The incoming header's value if it is one we may store and log as is."""
    if value and SANE.fullmatch(value):
        return value
    return None


def new_id() -> str:
    return uuid.uuid4().hex


class RequestIdMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request_id = accepted(request.META.get(META_KEY)) or new_id()
        request.request_id = request_id
        token = _current.set(request_id)
        started = time.perf_counter()
        try:
            response = self.get_response(request)
        finally:
            _current.reset(token)
        response[HEADER] = request_id
        from memory_console import metrics

        metrics.observe_request(request, response.status_code, time.perf_counter() - started)
        return response


class RequestIdFilter(logging.Filter):
    """Gives every record a `request_id` attribute ("-" outside a request)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            # django.request logs its 4xx/5xx lines after the middleware has returned, with
            # the request attached.
            attached = getattr(getattr(record, "request", None), "request_id", None)
            record.request_id = current() or attached or "-"
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, request id, and the
    traceback when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", None) or current(),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)
