"""The MCP endpoint: POST /mcp/ (the key's bound actor) and /mcp/actors/<ref>/ (the actor the
URL names). A plain synchronous view, so gunicorn's workers serve it like the API, and
the tools run on the request's own thread, database connection and transactions.

Before any JSON-RPC is read, the HTTP layer answers for itself, always in JSON-RPC's error
shape (`id` null): 405 for anything but POST (there is no SSE stream to GET, no session to
DELETE), 403 for a browser Origin that is not this site's (DNS rebinding), 401 without a
live key (the API's keys, reach and refusals), 415 for a body that is not JSON, 406 for a
client that will not take JSON, 503 while the database is unreachable.
"""

import json
import logging
from urllib.parse import urlsplit

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import HttpResponse
from django.http.request import validate_host
from django.views.decorators.csrf import csrf_exempt

from memory_console import unavailable
from memory_console.mcp import protocol
from memory_console.mcp.connection import Connection
from memory_console.mcp.jsonrpc import INVALID_REQUEST, UNAUTHORIZED, UNAVAILABLE, error
from memory_core.accounts import keys
from memory_core.db.outcome import OutcomeUnknown

logger = logging.getLogger(__name__)

# The headers protocol.py reads, by lower-case name.
MCP_HEADERS = ("mcp-protocol-version", "mcp-method", "mcp-name")
JSON = "application/json"


def json_answer(status: int, body: dict) -> HttpResponse:
    # Keys sorted, as the API's bodies: a replayed turn is byte-identical to the first.
    return HttpResponse(json.dumps(body, sort_keys=True), status=status, content_type=JSON)


def refusal(status: int, message: str, code: int = INVALID_REQUEST) -> HttpResponse:
    return json_answer(status, error(None, code, message))


@csrf_exempt
def endpoint(request, ref: str | None = None):
    if request.method != "POST":
        response = refusal(
            405, "Method Not Allowed: POST one JSON-RPC message (this server has no SSE stream)"
        )
        response["Allow"] = "POST"
        return response
    if not origin_allowed(request.headers.get("Origin")):
        return refusal(403, "Forbidden: the Origin header names another site")
    try:
        api_key = keys.authenticate(bearer_token(request.headers.get("Authorization")))
        if api_key is None:
            # One answer for a missing, unknown, revoked, paused or expired key; not
            # access-logged (there is no principal to record), as the API's 401.
            response = refusal(
                401, "Unauthorized: send Authorization: Bearer <API key>", UNAUTHORIZED
            )
            response["WWW-Authenticate"] = 'Bearer realm="memory-console"'
            return response
        if request.content_type != JSON:
            return refusal(415, "Unsupported Media Type: the body must be application/json")
        if not accepts_json(request.headers.get("Accept")):
            return refusal(406, "Not Acceptable: this server answers with application/json")
        headers = {name: request.headers[name] for name in MCP_HEADERS if name in request.headers}
        answer = protocol.handle(request.body, headers, Connection.for_key(api_key, ref))
    except OutcomeUnknown:
        logger.error("the outcome of %s is unknown (answered 504)", request.path)
        return refusal(504, unavailable.OUTCOME_UNKNOWN, UNAVAILABLE)
    except (InterfaceError, OperationalError) as failure:
        kind = unavailable.classify(failure)
        if kind is None:
            raise
        if kind == unavailable.TRANSIENT:
            logger.error("database conflict on %s (answered 503)", request.path, exc_info=failure)
        response = refusal(503, kind, UNAVAILABLE)
        response["Retry-After"] = unavailable.RETRY_AFTER
        return response
    if answer.body is None:
        return HttpResponse(status=202)
    return json_answer(answer.status, answer.body)


@csrf_exempt
def unknown_path(request, *args, **kwargs):
    """Under /mcp/, a path that is not the endpoint: a JSON 404, whatever the method."""
    return refusal(404, "Not Found: the MCP endpoint is /mcp/ or /mcp/actors/<ref>/")


def bearer_token(header: str | None) -> str | None:
    scheme, _, token = (header or "").partition(" ")
    if scheme.lower() != "bearer":
        return None
    return token.strip() or None


def accepts_json(header: str | None) -> bool:
    """No Accept header takes anything (RFC 9110); otherwise some range must cover JSON with
    a quality above zero (the transport's clients send `application/json, text/event-stream`)."""
    if not header or not header.strip():
        return True
    for part in header.split(","):
        media, *parameters = (piece.strip() for piece in part.split(";"))
        if media.lower() not in {JSON, "application/*", "*/*"}:
            continue
        quality = next((p[2:] for p in parameters if p.lower().startswith("q=")), "1")
        try:
            if float(quality) > 0:
                return True
        except ValueError:
            continue
    return False


def origin_allowed(origin: str | None) -> bool:
    """MCP's transport asks servers to check Origin against DNS rebinding: a browser page of
    another site must not reach a server on localhost. Non-browser clients send none."""
    if origin is None:
        return True
    if origin in settings.CSRF_TRUSTED_ORIGINS:
        return True
    try:
        host = urlsplit(origin).hostname
    except ValueError:
        return False
    if not host:
        return False
    if ":" in host:  # urlsplit drops an IPv6 address's brackets; ALLOWED_HOSTS keeps them
        host = f"[{host}]"
    return validate_host(host, settings.ALLOWED_HOSTS)
