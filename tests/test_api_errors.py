"""Every answer under /api/ is JSON `{"detail": ...}` with the right status, whoever gives
it: the API's operations, routing, the CSRF check, the Host check, an unhandled exception.
The console keeps its pages."""

import json

import pytest
from django.test import Client, RequestFactory

from memory_console.middleware import ApiErrorsAsJsonMiddleware
from memory_core.accounts import keys
from memory_core.models import AccessLog, Actor, Digest, LedgerEvent, Memory, Message
from tests.helpers import bearer


def stored():
    return {
        model.__name__: model.objects.count()
        for model in (Memory, Digest, Message, Actor, LedgerEvent, AccessLog)
    }


def assert_json(response, status: int, detail: str) -> None:
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    assert response.json() == {"detail": detail}
    if response.has_header("Content-Length"):
        assert int(response["Content-Length"]) == len(response.content)


@pytest.fixture
def csrf_client():
    """A client that, like a browser or curl, is held to the CSRF check."""
    return Client(enforce_csrf_checks=True)


# --- unknown paths ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    ["/api/v1/nope", "/api/v1/", "/api/v2/turns", "/api/", "/api/v1/actors/", "/api/x/y/z"],
)
@pytest.mark.parametrize("method", ["get", "post", "put", "patch", "delete"])
def test_unknown_api_path_is_json_404_whatever_the_method(db, csrf_client, path, method):
    response = csrf_client.generic(method.upper(), path, "{}", content_type="application/json")
    assert_json(response, 404, "Not Found")


def test_unknown_api_post_is_json_404_not_csrf_page(org, csrf_client):
    before = stored()
    response = csrf_client.post(
        "/api/v1/memory",
        {"actor": "u1"},
        content_type="application/json",
        headers=bearer(org.acme_secret),
    )
    assert_json(response, 404, "Not Found")
    assert stored() == before


# --- wrong methods ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("patch", "/api/v1/turns", "POST"),
        ("get", "/api/v1/turns", "POST"),
        ("put", "/api/v1/memories", "GET, POST"),
        # DELETE: a forget of the memory whose id is "search" (404, like any unknown id).
        ("post", "/api/v1/memories/search", "DELETE, GET"),
        ("post", "/api/v1/memories/mem_00000000000000000000000000", "DELETE, GET"),
        ("delete", "/api/v1/actors/u1", "GET, PUT"),
        ("get", "/api/v1/threads/thr_1/messages", "POST"),
        ("post", "/api/v1/health", "GET"),
        ("post", "/api/v1/openapi.json", "GET, HEAD"),
        ("delete", "/api/v1/docs", "GET, HEAD"),
    ],
)
def test_wrong_method_under_api_is_json_405(org, csrf_client, method, path, allow):
    before = stored()
    response = csrf_client.generic(
        method.upper(),
        path,
        "{}",
        content_type="application/json",
        headers=bearer(org.acme_secret),
    )
    assert_json(response, 405, "Method Not Allowed")
    assert sorted(response["Allow"].split(", ")) == allow.split(", ")
    assert stored() == before


def test_wrong_method_without_a_key_is_still_405(db, client):
    response = client.put("/api/v1/turns", "{}", content_type="application/json")
    assert_json(response, 405, "Method Not Allowed")
    assert response["Allow"] == "POST"


def test_the_openapi_document_still_answers_get_and_head(db, client):
    assert client.get("/api/v1/openapi.json").status_code == 200
    assert client.head("/api/v1/openapi.json").status_code == 200
    docs = client.get("/api/v1/docs")
    assert docs.status_code == 200 and docs["Content-Type"].startswith("text/html")


# --- Django's own 400 and 500 -----------------------------------------------------------


def test_bad_host_header_under_api_is_json_400(org, client):
    before = stored()
    response = client.post(
        "/api/v1/turns",
        {"actor": "u1", "run_id": "r1"},
        content_type="application/json",
        headers=bearer(org.acme_secret),
        HTTP_HOST="evil.example",
    )
    assert_json(response, 400, "Bad Request")
    assert stored() == before


def test_bad_host_header_on_the_console_is_still_a_page(db, client):
    response = client.get("/", HTTP_HOST="evil.example")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html")


def test_too_many_query_fields_under_api_is_json_400(org, client, settings):
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 10
    query = "&".join(f"f{i}=1" for i in range(11))
    response = client.get(f"/api/v1/memories?actor=u1&{query}", headers=bearer(org.acme_secret))
    assert_json(response, 400, "Bad Request")


def test_unhandled_exception_under_api_is_json_500(org, monkeypatch):
    def broken(token):
        raise RuntimeError("a bug")

    monkeypatch.setattr(keys, "authenticate", broken)
    client = Client(raise_request_exception=False)
    before = stored()
    response = client.post(
        "/api/v1/memories",
        {"actor": "u1", "key": "k", "fact": "f"},
        content_type="application/json",
        headers=bearer(org.acme_secret),
    )
    assert_json(response, 500, "Internal Server Error")
    assert stored() == before


def test_console_csrf_failure_is_still_the_csrf_page(db, csrf_client):
    response = csrf_client.post("/login/", {"username": "x", "password": "y"})
    assert response.status_code == 403
    assert response["Content-Type"].startswith("text/html")


# --- what stays as it was ---------------------------------------------------------------


def _page(status):
    from django.http import HttpResponse

    return HttpResponse("<p>page</p>", status=status)


@pytest.mark.parametrize("status", [400, 403, 404, 405, 500])
def test_console_errors_keep_their_pages(status):
    middleware = ApiErrorsAsJsonMiddleware(lambda request: _page(status))
    response = middleware(RequestFactory().get("/scopes/"))
    assert response.status_code == status and response.content == b"<p>page</p>"


def test_api_json_errors_and_successes_pass_through_unchanged(org, client):
    response = client.get("/api/v1/memories?actor=u1")
    assert_json(response, 401, "Unauthorized")
    ok = client.get("/api/v1/health")
    assert ok.status_code == 200 and ok.json() == {"status": "ok", "database": "ok"}


def test_the_rewrite_keeps_the_status_and_headers():
    def view(request):
        response = _page(403)
        response["X-Kept"] = "yes"
        return response

    response = ApiErrorsAsJsonMiddleware(view)(RequestFactory().post("/api/v1/anything"))
    assert response.status_code == 403 and response["X-Kept"] == "yes"
    assert json.loads(response.content) == {"detail": "Forbidden"}
