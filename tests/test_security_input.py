"""Hostile input to the agent API and the console: oversized bodies are refused before they
are read (413), deeply nested or huge JSON is a fast 4xx, and NUL, control characters and
bidirectional overrides are refused (422) with nothing stored, never a 500."""

import json
import time
from urllib.parse import quote

import pytest
from django.core.exceptions import RequestDataTooBig
from django.test import RequestFactory

from memory_console.middleware import RequestSizeLimitMiddleware
from memory_core.models import Actor, Digest, LedgerEvent, Memory, Message, Thread
from tests.helpers import bearer

MIB = 1024 * 1024
# Generous for a loaded CI machine; a parser that recursed or copied quadratically would
# take far longer than this on these bodies.
FAST_SECONDS = 2.0

BODY_ENDPOINTS = [
    ("post", "/api/v1/memories"),
    ("post", "/api/v1/turns"),
    ("put", "/api/v1/actors/u1"),
    ("post", "/api/v1/threads/t1/messages"),
]


def stored():
    """Row counts of everything an API call could write (the access log aside)."""
    return {
        model.__name__: model.objects.count()
        for model in (Memory, Digest, Message, Thread, Actor, LedgerEvent)
    }


class ExplodingStream:
    """A request body that must not be read."""

    def read(self, *args, **kwargs):
        raise AssertionError("the body was read")

    readline = read


# --- size -------------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "path"), BODY_ENDPOINTS)
def test_an_api_body_over_1_mib_is_a_json_413_and_nothing_is_stored(client, org, method, path):
    before = stored()
    body = json.dumps({"actor": "u1", "key": "big", "fact": "x" * MIB})
    started = time.monotonic()
    response = getattr(client, method)(
        path, body, content_type="application/json", headers=bearer(org.acme_secret)
    )
    assert time.monotonic() - started < FAST_SECONDS
    assert response.status_code == 413
    assert response["Content-Type"] == "application/json"
    assert response.json() == {
        "detail": f"request body is {len(body)} bytes; the limit is {MIB} bytes"
    }
    assert stored() == before


def test_a_body_of_exactly_1_mib_is_not_refused_for_its_size(client, org):
    padding = MIB - len(json.dumps({"actor": "u1", "key": "big", "fact": ""}))
    body = json.dumps({"actor": "u1", "key": "big", "fact": "x" * padding})
    assert len(body) == MIB
    response = client.post(
        "/api/v1/memories", body, content_type="application/json", headers=bearer(org.acme_secret)
    )
    assert response.status_code == 422  # the fact's own limit, not the body's
    assert "the limit is 240 characters" in response.json()["detail"]


def test_the_413_is_decided_from_content_length_without_reading_the_body(client, org):
    response = client.generic(
        "POST",
        "/api/v1/memories",
        b"",
        content_type="application/json",
        headers=bearer(org.acme_secret),
        **{"CONTENT_LENGTH": str(50 * MIB), "wsgi.input": ExplodingStream()},
    )
    assert response.status_code == 413
    assert response.json()["detail"].startswith(f"request body is {50 * MIB} bytes")


def test_an_oversized_console_post_is_a_plain_413_page_before_login_or_csrf(client, org, users):
    client.force_login(users.owner)
    before = stored()
    response = client.generic(
        "POST",
        "/scopes/tenant:acme/publish/",
        b"",
        content_type="application/x-www-form-urlencoded",
        **{"CONTENT_LENGTH": str(2 * MIB), "wsgi.input": ExplodingStream()},
    )
    assert response.status_code == 413
    assert response["Content-Type"].startswith("text/html")
    assert b"Request too large" in response.content
    assert stored() == before


def test_a_chunked_body_without_content_length_is_refused_not_silently_emptied(client, org):
    response = client.generic(
        "POST",
        "/api/v1/memories",
        b"",
        content_type="application/json",
        headers=bearer(org.acme_secret),
        **{"CONTENT_LENGTH": "", "HTTP_TRANSFER_ENCODING": "chunked"},
    )
    assert response.status_code == 411
    assert "Content-Length" in response.json()["detail"]


def test_request_data_too_big_raised_by_a_view_is_a_413_in_the_callers_shape():
    middleware = RequestSizeLimitMiddleware(lambda request: None)
    factory = RequestFactory()
    api = middleware.process_exception(factory.post("/api/v1/turns"), RequestDataTooBig("big"))
    assert api.status_code == 413
    assert json.loads(api.content) == {
        "detail": f"request body is too large; the limit is {MIB} bytes"
    }
    page = middleware.process_exception(factory.post("/ledger/verify/"), RequestDataTooBig("big"))
    assert page.status_code == 413 and page["Content-Type"].startswith("text/html")
    assert middleware.process_exception(factory.get("/"), ValueError("other")) is None


# --- shape ------------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "path"), BODY_ENDPOINTS)
@pytest.mark.parametrize(
    "body",
    [
        pytest.param("[" * 10_000 + "]" * 10_000, id="array-10000-deep"),
        pytest.param('{"a":' * 10_000 + "1" + "}" * 10_000, id="object-10000-deep"),
        pytest.param(
            json.dumps({"actor": "u1", "key": "k", "fact": "x" * (900 * 1024)}), id="fact-900KiB"
        ),
        pytest.param(json.dumps({"actor": "u1", "padding": [0] * 300_000}), id="list-900KiB"),
        pytest.param(json.dumps({f"field{i}": i for i in range(50_000)}), id="object-50000-fields"),
    ],
)
@pytest.mark.slow  # megabyte bodies, parsed and refused
def test_deep_or_huge_json_is_a_fast_4xx_and_nothing_is_stored(client, org, method, path, body):
    assert len(body) < MIB  # under the size limit: the parser and the schemas must cope
    before = stored()
    started = time.monotonic()
    response = getattr(client, method)(
        path, body, content_type="application/json", headers=bearer(org.acme_secret)
    )
    elapsed = time.monotonic() - started
    assert 400 <= response.status_code < 500, response.content[:200]
    assert "detail" in response.json()
    assert elapsed < FAST_SECONDS, f"{elapsed:.2f}s"
    assert stored() == before


# --- characters -------------------------------------------------------------------------

CONTROL = {
    "nul": "\x00",
    "soh": "\x01",
    "esc": "\x1b",
    "del": "\x7f",
    "c1-nel": "\x85",
}
BIDI = {"rlo": "\u202e", "lri": "\u2066"}


def _requests(value: str):
    """(field, method, path, body or query) for every place a field reaches the API."""
    v = value
    return [
        ("key", "post", "/api/v1/memories", {"actor": "u1", "key": f"k{v}", "fact": "f"}),
        ("fact", "post", "/api/v1/memories", {"actor": "u1", "key": "k", "fact": f"a{v}b"}),
        ("actor", "post", "/api/v1/memories", {"actor": f"u{v}1", "key": "k", "fact": "f"}),
        ("actor", "post", "/api/v1/turns", {"actor": f"u{v}1", "run_id": "r"}),
        ("actor", "put", f"/api/v1/actors/{quote(f'u{v}1')}", {"scopes": []}),
        ("actor", "get", "/api/v1/memories", {"actor": f"u{v}1"}),
        (
            "actor",
            "post",
            "/api/v1/threads/t1/messages",
            {"actor": f"u{v}1", "role": "user", "text": "hi"},
        ),
        (
            "run_id",
            "post",
            "/api/v1/memories",
            {"actor": "u1", "key": "k", "fact": "f", "run_id": f"r{v}1"},
        ),
        ("run_id", "post", "/api/v1/turns", {"actor": "u1", "run_id": f"r{v}1"}),
        (
            "run_id",
            "post",
            "/api/v1/threads/t1/messages",
            {"actor": "u1", "role": "user", "text": "hi", "run_id": f"r{v}1"},
        ),
        (
            "thread_id",
            "post",
            "/api/v1/memories",
            {"actor": "u1", "key": "k", "fact": "f", "thread_id": f"t{v}1"},
        ),
        (
            "thread_id",
            "post",
            "/api/v1/turns",
            {"actor": "u1", "run_id": "r", "thread_id": f"t{v}1"},
        ),
        (
            "thread_id",
            "post",
            f"/api/v1/threads/{quote(f't{v}1')}/messages",
            {"actor": "u1", "role": "user", "text": "hi"},
        ),
        (
            "tool_call_id",
            "post",
            "/api/v1/memories",
            {"actor": "u1", "key": "k", "fact": "f", "run_id": "r", "tool_call_id": f"c{v}1"},
        ),
        ("q", "get", "/api/v1/memories/search", {"actor": "u1", "q": f"a{v}b"}),
        ("q", "post", "/api/v1/turns", {"actor": "u1", "run_id": "rq", "query": f"a{v}b"}),
    ]


def _send(client, secret, method, path, data):
    if method == "get":
        return client.get(path, data, headers=bearer(secret))
    return getattr(client, method)(
        path, data, content_type="application/json", headers=bearer(secret)
    )


@pytest.mark.parametrize("char", CONTROL.values(), ids=CONTROL.keys())
def test_nul_and_control_characters_are_422_with_nothing_stored(client, org, char):
    requests = _requests(char)
    assert {field for field, *_ in requests} == {
        "key",
        "fact",
        "actor",
        "run_id",
        "thread_id",
        "tool_call_id",
        "q",
    }
    for field, method, path, data in requests:
        before = stored()
        response = _send(client, org.acme_secret, method, path, data)
        assert response.status_code == 422, (field, path, response.content[:200])
        assert response.json()["detail"], (field, path)
        assert stored() == before, (field, path)


@pytest.mark.parametrize("char", BIDI.values(), ids=BIDI.keys())
def test_bidi_overrides_in_keys_facts_and_actor_refs_are_422_with_nothing_stored(client, org, char):
    for field, method, path, data in _requests(char):
        if field not in {"key", "fact", "actor"}:
            continue
        before = stored()
        response = _send(client, org.acme_secret, method, path, data)
        assert response.status_code == 422, (field, path, response.content[:200])
        assert stored() == before, (field, path)


@pytest.mark.parametrize("char", BIDI.values(), ids=BIDI.keys())
def test_bidi_overrides_in_host_ids_and_queries_are_stored_verbatim_never_a_500(client, org, char):
    """Bidirectional controls in the host's run, thread and tool-call ids are refused (422);
    in a query they are accepted and must then round-trip exactly, escaped in JSON."""
    for field, method, path, data in _requests(char):
        if field not in {"run_id", "thread_id", "tool_call_id", "q"}:
            continue
        response = _send(client, org.acme_secret, method, path, data)
        assert response.status_code in {200, 201, 422}, (field, path, response.status_code)
        if response.status_code == 422:
            continue
        assert char.encode() not in response.content  # escaped in JSON
        if path == "/api/v1/memories":
            column = {"run_id": "origin_run", "thread_id": "origin_thread"}.get(
                field, "origin_tool_call"
            )
            assert Memory.objects.filter(**{column: data[field]}).exists(), field
        elif field == "run_id" and path == "/api/v1/turns":
            assert Digest.objects.filter(actor=org.u1, run_id=data["run_id"]).exists()
        elif field == "thread_id" and "/threads/" in path:
            assert Thread.objects.filter(actor=org.u1, ref=f"t{char}1").exists()


@pytest.mark.parametrize("field", ["run_id", "thread_id", "tool_call_id"])
def test_bidi_overrides_in_host_ids_are_refused(client, org, field):
    data = {"actor": "u1", "key": "k", "fact": "f", "run_id": "r", field: "a\u202eb"}
    response = _send(client, org.acme_secret, "post", "/api/v1/memories", data)
    assert response.status_code == 422
