"""gunicorn's own logs, one JSON object per line, with nothing a forget must remove.

`manage.py serve` names this class as gunicorn's `logger_class` (settings.GUNICORN_LOGGER).

The access log: each line is built as a dict and written with json.dumps, never through a
printf-style format, so a quote, a backslash, a control character or a byte that is not
UTF-8 in the request line or a header is escaped like any other text and cannot end the
line or the JSON object early. It records the path and the *names* of the query
parameters, never their values: `q` of the memory search and `line` of the console's
attribution page carry memory and conversation text, which would outlive a forget in a log
that is never scrubbed. No Referer either: it is a whole URL, query string included.

The error log (gunicorn's "Booting worker", "Invalid request from …"): JSON lines as the
app's (memory_console/request_ids.py, LOG_FORMAT), and gunicorn's messages that quote a
request line, a URI or raw request bytes lose what they quote (ClientInputFilter).
"""

import json
import logging
import re
from datetime import UTC, datetime, timedelta

from django.conf import settings
from gunicorn.glogging import Logger

from memory_console.request_ids import JsonFormatter

# A parameter name as the app's own are spelled (`actor`, `q`, `thread_id`, `a_before`).
# Anything else is logged as "?": a name that does not look like one may be text, and a
# bare token (`?passport`) is as often a value as a name.
PARAMETER_NAME = re.compile(r"[A-Za-z0-9_.\[\]-]{1,64}")
UNNAMED = "?"


def readable(value) -> str:
    """A WSGI string (the request's bytes, decoded as Latin-1) or bytes, as UTF-8 text;
    bytes that are not UTF-8 become `\\xff` escapes rather than an error or a lone
    surrogate some JSON parsers refuse."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        raw = value
    else:
        try:
            raw = str(value).encode("latin-1")
        except UnicodeEncodeError:  # not a WSGI string: already text
            raw = str(value).encode("utf-8", "backslashreplace")
    return raw.decode("utf-8", "backslashreplace")


def split_uri(raw_uri: str) -> tuple[str, str]:
    """(path, query string) of a request target as the client sent it."""
    before_fragment = raw_uri.partition("#")[0]
    path, _, query = before_fragment.partition("?")
    return path, query


def parameter_names(query: str) -> list[str]:
    """The query string's parameter names, sorted, each once; never a value."""
    names = set()
    for part in query.split("&"):
        if not part:
            continue
        name, equals, _value = part.partition("=")
        names.add(name if equals and PARAMETER_NAME.fullmatch(name) else UNNAMED)
    return sorted(names)


def status_code(status) -> int | None:
    try:
        return int(str(status).split(None, 1)[0])
    except (TypeError, ValueError, IndexError):
        return None


def response_header(resp, name: str) -> str | None:
    for key, value in getattr(resp, "headers", None) or ():
        if str(key).lower() == name:
            return readable(value)
    return None


def access_entry(resp, req, environ: dict, request_time: timedelta) -> dict:
    """One request's access-log record: nothing in it holds a query value."""
    raw_uri = environ.get("RAW_URI")
    if raw_uri is None:  # not gunicorn's environ: WSGI's own keys
        path, query = environ.get("PATH_INFO", ""), environ.get("QUERY_STRING", "")
    else:
        path, query = split_uri(raw_uri)
    return {
        "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
        "level": "INFO",
        "logger": "gunicorn.access",
        "remote": readable(environ.get("REMOTE_ADDR")) or None,
        "method": readable(environ.get("REQUEST_METHOD")),
        "path": readable(path),
        "query": parameter_names(readable(query)),
        "protocol": readable(environ.get("SERVER_PROTOCOL")),
        "status": status_code(getattr(resp, "status", None)),
        "bytes": getattr(resp, "sent", None),
        "micros": request_time // timedelta(microseconds=1),
        "request_id": response_header(resp, "x-request-id"),
        "user_agent": readable(environ.get("HTTP_USER_AGENT")) or None,
    }


# gunicorn's error messages that quote the client's request: "Invalid request from
# ip=…: Invalid HTTP request line: 'GET /search?q=passport FORGET… HTTP/1.1'" keeps what
# the error is and drops the quote; any query string left in a message is cut to "?…".
INVALID_REQUEST = "Invalid request from ip="
QUERY = re.compile(r"\?[^\s'\"]+")


def without_client_input(message: str) -> str:
    if message.startswith(INVALID_REQUEST):
        where, _, error = message.partition(": ")
        message = f"{where}: {error.partition(': ')[0]}"
    return QUERY.sub("?…", message)


class ClientInputFilter(logging.Filter):
    """Rewrites a gunicorn error-log record's message without what the client sent."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - arguments that do not fit: keep the bare format
            message = str(record.msg)
        record.msg = without_client_input(message)
        record.args = ()
        return True


class JsonLogger(Logger):
    """gunicorn's Logger, writing the access and error logs described above."""

    def setup(self, cfg):
        super().setup(cfg)
        for handler in self.error_log.handlers:
            if getattr(handler, "_gunicorn", False):
                handler.addFilter(ClientInputFilter())
                if settings.LOG_FORMAT == "json":
                    handler.setFormatter(JsonFormatter())

    def access(self, resp, req, environ, request_time):
        # Computed once per configuration by recent gunicorn; without it, log whenever asked.
        if not getattr(self, "access_log_enabled", True):
            return
        try:
            line = json.dumps(access_entry(resp, req, environ, request_time))
        except Exception:  # noqa: BLE001 - a log line must never fail the request
            self.exception("could not write an access-log line")
            return
        # The line is the whole message: no arguments, so no %-formatting of it.
        self.access_log.info(line)
