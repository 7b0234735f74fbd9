"""Small guards in front of every view: the Content-Security-Policy header, a refusal of
request bodies too large to be anything this server takes, and JSON errors under /api/
and /mcp/.

Each answers in the shape of the part of the site asked: `{"detail": ...}` JSON under
/api/, a JSON-RPC error object (id null) under /mcp/, a plain page elsewhere.
"""

import json

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpResponse, JsonResponse
from django.utils.html import escape

from memory_console.mcp import jsonrpc

API_PREFIX = "/api/"


def is_mcp(path: str) -> bool:
    return path == "/mcp" or path.startswith("/mcp/")


def _mcp_error(status: int, detail: str) -> JsonResponse:
    code = jsonrpc.INTERNAL_ERROR if status >= 500 else jsonrpc.INVALID_REQUEST
    return JsonResponse(jsonrpc.error(None, code, detail), status=status)


def _refusal(request, status: int, title: str, detail: str) -> HttpResponse:
    if request.path.startswith(API_PREFIX):
        response = JsonResponse({"detail": detail}, status=status)
    elif is_mcp(request.path):
        response = _mcp_error(status, detail)
    else:
        # Plain markup, no template: nothing here depends on the session, the user or the
        # database, so the refusal costs nothing whatever state the rest of the app is in.
        page = (
            '<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f"<title>{escape(title)} · Memory Console</title></head>"
            f"<body><h1>{status} {escape(title)}</h1><p>{escape(detail)}</p></body></html>"
        )
        response = HttpResponse(page, status=status, content_type="text/html; charset=utf-8")
    return response


def _too_large(request, limit: int, length: int | None = None) -> HttpResponse:
    size = f"is {length} bytes" if length is not None else "is too large"
    detail = f"request body {size}; the limit is {limit} bytes"
    return _refusal(request, 413, "Request too large", detail)


class RequestSizeLimitMiddleware:
    """413 for a body over DATA_UPLOAD_MAX_MEMORY_SIZE (1 MiB), decided from Content-Length
    before anything reads the body; 411 for a chunked body without a Content-Length (under
    WSGI Django would silently read it as empty); and RequestDataTooBig, should a view or
    Django's own parsing raise it, as 413 rather than a 400."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        declared = request.META.get("CONTENT_LENGTH") or ""
        try:
            length = int(declared) if declared.strip() else None
        except ValueError:
            return _refusal(request, 400, "Bad request", "Content-Length is not a number")
        if length is not None and limit is not None and length > limit:
            return _too_large(request, limit, length)
        chunked = "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower()
        if length is None and chunked:
            detail = "send the request body with a Content-Length header, not chunked"
            return _refusal(request, 411, "Length required", detail)
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, RequestDataTooBig):
            return _too_large(request, settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
        return None


class ApiErrorsAsJsonMiddleware:
    """Under /api/ every error is `{"detail": ...}`, whoever produced it (under /mcp/, a
    JSON-RPC error object, the shape an MCP client reads).

    The API's own refusals are JSON already. The rest come from Django and are pages: the
    CSRF failure page, the 404 of an unrouted path, the 400 of a bad Host header (raised
    in any middleware), the 500 of an unhandled exception, and the empty 405 a Ninja
    route or the docs answer to a method they do not take. Rather than one hook per source
    (handler400/403/404/500, CSRF_FAILURE_VIEW, Ninja's 405), this rewrites any error
    under /api/ that is not JSON into `{"detail": <reason phrase>}` in place: the status
    and every header (Allow on a 405, the security headers) stay as they were. First in
    MIDDLEWARE, so it also sees what the other middleware answered or raised.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        mcp = is_mcp(request.path)
        if (
            response.status_code >= 400
            and (mcp or request.path.startswith(API_PREFIX))
            and not response.get("Content-Type", "").startswith("application/json")
            and not response.streaming
        ):
            if mcp:
                body = _mcp_error(response.status_code, response.reason_phrase).content
            else:
                body = json.dumps({"detail": response.reason_phrase})
            response.content = body
            response["Content-Type"] = "application/json"
            if response.has_header("Content-Length"):
                response["Content-Length"] = str(len(response.content))
        return response


class ContentSecurityPolicyMiddleware:
    """Sets CONTENT_SECURITY_POLICY on every response that has none of its own."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        policy = settings.CONTENT_SECURITY_POLICY
        if policy and "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = policy
        return response
