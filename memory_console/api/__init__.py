"""The agent JSON API (docs/agents/api.md): one NinjaAPI, a Router per area, errors as
{"detail": ...}.

Handlers parse, call one memory_core service, and shape the answer. Refusals come out of
the services as DomainError (Invalid 422, Forbidden 403, NotFound 404) and are mapped to
HTTP once, here.
"""

import logging

from django.db import InterfaceError, OperationalError
from django.http import JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_safe
from ninja import NinjaAPI
from ninja.errors import HttpError, ValidationError
from ninja.parser import Parser

from memory_console import unavailable
from memory_console.api import actors, health, memories, threads, turns
from memory_console.api.auth import ApiKeyBearer
from memory_core.db.outcome import OutcomeUnknown
from memory_core.errors import DomainError, Unavailable
from memory_core.ledger import access_log

logger = logging.getLogger(__name__)


def read_only_document(view):
    """The OpenAPI document and the docs page: GET and HEAD, anything else a 405 (JSON, by
    ApiErrorsAsJsonMiddleware). Exempt from CSRF like every API view, so a POST is told
    the method is wrong rather than shown the CSRF page."""
    return csrf_exempt(require_safe(view))


class BodyNotJson(ValueError):
    """The request body does not parse as JSON (or is not UTF-8)."""


class JsonBodyParser(Parser):
    """Ninja's JSON parser, with its failure named: Ninja wraps any parse error in a 400
    HttpError; `http_error` below knows this one by its cause and answers a logged 422."""

    def parse_body(self, request):
        try:
            return super().parse_body(request)
        # JSONDecodeError and UnicodeDecodeError alike, and nesting too deep to parse.
        except (ValueError, RecursionError) as error:
            raise BodyNotJson(type(error).__name__) from error


# The access-log action of each operation, by (method, Django URL name), so a request
# refused before its handler runs (a body that is not JSON, an unknown field, a wrong type,
# a query parameter out of range) is logged under the name its handler's refusals use.
# Ninja names a path's URL after its first operation: GET /memories is "remember" too.
ACTIONS = {
    ("POST", "take_turn"): "turn",
    ("POST", "remember"): "remember",
    ("GET", "remember"): "read_back",
    ("GET", "search"): "search",
    ("GET", "get_memory"): "memory.get",
    ("DELETE", "get_memory"): "forget",
    ("PUT", "put_actor"): "actor.put",
    ("GET", "put_actor"): "actor.get",
    ("POST", "post_message"): "message",
    ("POST", "extract_thread"): "extract",
}


class AgentAPI(NinjaAPI):
    def get_openapi_operation_id(self, operation) -> str:
        # The handler's name (take_turn, remember, forget …) rather than Ninja's
        # module-qualified default, for readable generated clients.
        return operation.view_func.__name__


api = AgentAPI(
    title="Memory Console agent API",
    version="1",
    description=(
        "Agents read and write memories about the people they work for. Every call but "
        '/health needs `Authorization: Bearer <api key>`. Errors are `{"detail": ...}`.'
    ),
    urls_namespace="api",
    docs_url="/docs",
    openapi_url="/openapi.json",
    docs_decorator=read_only_document,
    auth=ApiKeyBearer(),
    parser=JsonBodyParser(),
)

api.add_router("/turns", turns.router)
api.add_router("/memories", memories.router)
api.add_router("/actors", actors.router)
api.add_router("/threads", threads.router)
api.add_router("/health", health.router)


@api.exception_handler(DomainError)
def domain_error(request, error: DomainError):
    response = api.create_response(request, {"detail": error.message}, status=error.status)
    if isinstance(error, Unavailable):
        response["Retry-After"] = str(error.retry_after)
    return response


@api.exception_handler(ValidationError)
def validation_error(request, error: ValidationError):
    """Ninja's 422, with one readable sentence per problem instead of pydantic's dicts."""
    detail = "; ".join(_describe(problem) for problem in error.errors)
    kinds = sorted({str(problem.get("type", "invalid")) for problem in error.errors})
    _log_refusal(request, {"reason": "invalid", "problems": kinds})
    return api.create_response(request, {"detail": detail}, status=422)


@api.exception_handler(HttpError)
def http_error(request, error: HttpError):
    """A body that is not JSON is malformed input like any other: a 422, logged. Any
    other HttpError is answered as Ninja would."""
    if isinstance(error.__cause__, BodyNotJson):
        _log_refusal(request, {"reason": "invalid", "problems": ["json_invalid"]})
        return api.create_response(request, {"detail": "request body: not JSON"}, status=422)
    return api.create_response(request, {"detail": str(error)}, status=error.status_code)


def _log_refusal(request, detail: dict) -> None:
    """Ninja refused the request before its handler ran, after the key was checked (a
    request without a valid key is a 401, never logged). Logged as the handler's own
    refusals are: action and outcome, no actor, and nothing of the rejected body (it may
    hold a fact or a key) beyond the kinds of problem found."""
    principal = getattr(request, "auth", None)
    if principal is None:
        return
    match = request.resolver_match
    action = ACTIONS.get((request.method, match.url_name if match else None), "api.request")
    access_log.record(principal, action, 422, detail=detail)


@api.exception_handler(OutcomeUnknown)
def outcome_unknown(request, error: OutcomeUnknown):
    """A write whose commit the database never confirmed (memory_core/db/outcome.py): not a
    503, which says nothing was written and invites the retry that could store it twice."""
    logger.error("the outcome of %s is unknown (answered 504)", request.path)
    return api.create_response(request, {"detail": unavailable.OUTCOME_UNKNOWN}, status=504)


@api.exception_handler(InterfaceError)
@api.exception_handler(OperationalError)
def database_unavailable(request, error: OperationalError | InterfaceError):
    """The database is unreachable (or the pool timed out): a JSON 503 rather than a
    traceback; the next request retries the connection, so the API recovers by itself.
    A deadlock or serialization failure is a 503 too (rolled back, worth a retry), logged
    as an error. Any other OperationalError is no reason to retry: Django's 500.
    See memory_console/unavailable.py, which does the same for the console."""
    kind = unavailable.classify(error)
    if kind is None:
        raise error
    if kind == unavailable.TRANSIENT:
        logger.error("database conflict on %s (answered 503)", request.path, exc_info=error)
    return api.create_response(request, {"detail": kind}, status=503)


@csrf_exempt
def unknown_path(request, *args, **kwargs):
    """Anything under /api/ that names no operation (e.g. `/actors/` with an empty ref, or
    `/api/v2/…`): a 404 in the API's own `{"detail": ...}` shape, whatever the method.
    Exempt from CSRF, as the API's operations are (they take a bearer key, not a cookie),
    so a POST to a mistyped path is a 404 rather than Django's CSRF page."""
    return JsonResponse({"detail": "Not Found"}, status=404)


def _describe(problem: dict) -> str:
    # loc is (source, parameter, *field): ("body", "payload", "fact") or ("query", "limit").
    loc = [str(part) for part in problem.get("loc", ())]
    if loc[:1] == ["body"]:
        where = ".".join(loc[2:]) or "request body"
    else:
        where = ".".join(loc[1:])
    kind = problem.get("type", "")
    if kind == "extra_forbidden":
        return f"unknown field: {where}"
    if kind == "missing":
        return f"{where}: required"
    message = str(problem.get("msg", "invalid"))
    message = message.removeprefix("Value error, ")
    return f"{where}: {message}" if where else message
