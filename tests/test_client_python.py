"""The Python client (clients/python, `memory_console_client`) against a live server.

Each call goes over HTTP to pytest-django's `live_server` (the whole app, on the test
database), and the tests assert what the server wrote, as the API's own tests do. The
retry policy is tested without a server, on httpx's MockTransport, since a real server
cannot be made to drop a connection on cue.
"""

import asyncio
import concurrent.futures
import json

import httpx
import pytest

from memory_console_client import (
    AgentOrigin,
    AsyncClient,
    Client,
    ConnectionFailed,
    Forbidden,
    Gone,
    HumanOrigin,
    Memory,
    MemoryConsoleError,
    NotFound,
    RateLimited,
    Remembered,
    ServerError,
    Turn,
    Unauthorized,
    ValidationError,
)
from memory_console_client.errors import error_for
from memory_core import erasure, writes
from memory_core.models import AccessLog, Actor, LedgerEvent, Message
from memory_core.models import Memory as MemoryRow

# What the unknown-path view answers: a route that does not exist (yet).
NO_ROUTE = "Not Found"


def run(coroutine):
    """A coroutine in a thread of its own: the browser tests of the same session leave an
    event loop running in the main thread, where asyncio.run() refuses to start another."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


@pytest.fixture
def policy(transactional_db, org, operator):
    """A tenant policy that u1's chain holds (wider than u1: the agent may not forget it)."""
    return writes.publish(org.acme, "units", "report distances in kilometres", principal=operator)


@pytest.fixture
def memory(live_server, org):
    with Client(live_server.url, org.acme_secret) as client:
        yield client


# slow: a live server for each test.
@pytest.mark.slow
def test_every_method_round_trips_against_the_live_server(memory, org, policy):
    assert memory.health().status == "ok"

    actor = memory.put_actor("u3", ["team:ops"], display_name="User Three")
    assert (actor.ref, actor.display_name) == ("u3", "User Three")
    assert actor.scopes == ["actor:acme/u3", "team:acme/ops", "tenant:acme", "global"]
    assert memory.get_actor("u3") == actor

    written = memory.remember(
        "u3", "tone", "prefers short answers", run_id="r1", tool_call_id="c1", thread_id="t1"
    )
    assert isinstance(written, Remembered)
    assert (written.key, written.text, written.scope, written.author) == (
        "tone",
        "prefers short answers",
        "actor:acme/u3",
        "agent",
    )
    assert written.origin == AgentOrigin(
        actor="acme/u3", thread_id="t1", run_id="r1", tool_call_id="c1", resolves=False
    )
    assert written.similar == [] and written.supersedes is None
    again = memory.remember("u3", "tone", "prefers short answers", run_id="r1", tool_call_id="c1")
    assert again.id == written.id  # the stored record, not a second write

    turn = memory.turn("u3", "run-1", query="answers", max_memories=5, thread_id="t1")
    assert isinstance(turn, Turn)
    assert turn.scopes == actor.scopes
    assert "- [actor:acme/u3] tone: prefers short answers" in turn.block
    assert "- [tenant:acme] units: report distances in kilometres" in turn.block
    assert {line.memory_id for line in turn.lines} == {written.id, policy.uid}
    assert turn.stats.offered == 2
    assert memory.turn("u3", "run-1", query="answers") == turn  # the stored digest

    page = memory.list_memories("u3", limit=1)
    assert page.count == 2 and len(page.items) == 1
    assert [m.key for m in memory.list_memories("u3", thread_id="t1").items] == ["tone"]
    held_wider = memory.get_memory(policy.uid, "u3")
    assert isinstance(held_wider, Memory) and held_wider.scope == "tenant:acme"
    assert isinstance(held_wider.origin, HumanOrigin) and held_wider.author == "human"

    found = memory.search("u3", "short answers", limit=3)
    assert found.items[0].id == written.id and found.tier in {"fts", "trigram", "like", "hybrid"}

    message = memory.record_message("t1", "u3", "user", "call me Sam", run_id="run-1")
    assert (message.thread_id, message.run_id, message.role) == ("t1", "run-1", "user")
    assert Message.objects.get(uid=message.id).text == "call me Sam"

    assert memory.forget(written.id, "u3") is None
    assert not MemoryRow.objects.filter(key="tone").exists()
    with pytest.raises(NotFound):
        memory.get_memory(written.id, "u3")

    rows = AccessLog.objects.filter(channel="api", principal=f"key:{org.acme_key.prefix}")
    assert {(row.action, row.outcome) for row in rows} >= {
        ("actor.put", 200),
        ("remember", 201),
        ("remember", 200),
        ("turn", 200),
        ("read_back", 200),
        ("memory.get", 200),
        ("search", 200),
        ("message", 201),
        ("forget", 204),
    }
    assert LedgerEvent.objects.filter(kind="memory.remembered", actor_ref="acme/u3").count() == 1


@pytest.mark.slow
def test_refusals_raise_their_class_with_status_and_detail(live_server, memory, org, users, policy):
    with pytest.raises(Unauthorized) as unauthorized:
        with Client(live_server.url, "mc_not-a-key") as stranger:
            stranger.turn("u1", "run-1")
    assert (unauthorized.value.status, unauthorized.value.detail) == (401, "Unauthorized")

    with pytest.raises(NotFound) as other_tenant:
        memory.list_memories("globex/x9")
    assert other_tenant.value.status == 404
    assert other_tenant.value.detail == "actor 'globex/x9' not found"

    with pytest.raises(ValidationError) as too_long:
        memory.remember("u1", "tone", "x" * 241)
    assert too_long.value.status == 422
    assert too_long.value.detail == "fact is 241 characters; the limit is 240 characters"

    with pytest.raises(Forbidden) as wider:
        memory.forget(policy.uid, "u1")
    assert wider.value.status == 403
    assert MemoryRow.objects.filter(uid=policy.uid, retired_at=None).exists()

    erasure.erase_actor(org.u2, principal=users.p_owner)
    with pytest.raises(Gone) as erased:
        memory.remember("u2", "tone", "formal")
    assert erased.value.status == 410 and "erased" in erased.value.detail
    assert not MemoryRow.objects.filter(scope__token="actor:acme/u2").exists()

    for error in (unauthorized, other_tenant, too_long, wider, erased):
        assert isinstance(error.value, MemoryConsoleError)
    assert not Actor.objects.filter(ref="acme/u9").exists()


@pytest.mark.slow
def test_the_async_client_has_the_same_methods(live_server, org, policy):
    async def main():
        async with AsyncClient(live_server.url, org.acme_secret) as memory:
            written = await memory.remember("u1", "tone", "formal", run_id="r1", tool_call_id="c1")
            turn = await memory.turn("u1", "run-1")
            one = await memory.get_memory(written.id, "u1")
            with pytest.raises(NotFound):
                await memory.get_actor("globex/x9")
            await memory.forget(written.id, "u1")
            return written, turn, one

    written, turn, one = run(main())
    assert one.id == written.id and one.scope == "actor:acme/u1"
    assert "- [actor:acme/u1] tone: formal" in turn.block
    assert not MemoryRow.objects.filter(key="tone").exists()


@pytest.mark.slow
def test_extract_is_refused_with_409_while_extraction_is_off(memory, org):
    memory.record_message("t1", "u1", "user", "I report on the calendar year")
    with pytest.raises(MemoryConsoleError) as refused:
        memory.extract("t1", "u1")
    if refused.value.status == 404 and refused.value.detail == NO_ROUTE:
        pytest.skip("the server has no POST /threads/{thread_id}/extract route yet")
    assert refused.value.status == 409
    assert not MemoryRow.objects.filter(scope__token="actor:acme/u1").exists()


# --- retries, on a transport that fails on cue (no server) -------------------------------


class Script:
    """A MockTransport handler answering from a list: a status, or an exception to raise."""

    def __init__(self, *answers, body=None):
        self.answers = list(answers)
        self.body = body or {}
        self.requests = []

    def __call__(self, request):
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        headers = {"Retry-After": "0"} if answer == 503 else {}
        body = self.body if answer < 400 else {"detail": f"answer {answer}"}
        return httpx.Response(answer, json=body, headers=headers)


HEALTHY = {"status": "ok", "database": "ok"}
DOWN = httpx.ConnectError("connection refused")


def scripted(script, retries=2):
    return Client(
        "http://memory.test", "mc_key", retries=retries, transport=httpx.MockTransport(script)
    )


def test_a_read_is_retried_after_a_connection_failure_and_a_5xx():
    script = Script(DOWN, 503, 200, body=HEALTHY)
    assert scripted(script).health().status == "ok"
    assert [r.url.path for r in script.requests] == ["/api/v1/health"] * 3


def test_retries_stop_at_the_limit_and_raise_the_last_failure():
    script = Script(500, 502, 503)
    with pytest.raises(ServerError) as failed:
        scripted(script).get_actor("u1")
    assert (failed.value.status, failed.value.detail) == (503, "answer 503")
    assert len(script.requests) == 3

    script = Script(DOWN, DOWN)
    with pytest.raises(ConnectionFailed) as unreachable:
        scripted(script, retries=1).list_memories("u1")
    assert unreachable.value.status is None and len(script.requests) == 2


MEMORY = {
    "id": "mem_1",
    "key": "tone",
    "text": "formal",
    "scope": "actor:acme/u1",
    "pinned": False,
    "tags": [],
    "author": "agent",
    "origin": {
        "actor": "u1",
        "thread_id": None,
        "run_id": "r1",
        "tool_call_id": "c1",
        "resolves": True,
    },
    "created_at": "2026-09-01T09:12:44Z",
    "supersedes": None,
    "overrides": [],
}
TURN = {
    "run_id": "run-1",
    "actor": "u1",
    "scopes": ["actor:acme/u1", "tenant:acme", "global"],
    "block": "",
    "entries": [],
    "lines": [],
    "stats": {
        "offered": 0,
        "omitted": 0,
        "pinned_omitted": 0,
        "recalled": 0,
        "prompt_chars": 0,
        "partial": False,
    },
}


def test_writes_that_the_api_makes_idempotent_are_retried():
    script = Script(DOWN, 500, 200, body=TURN)
    assert scripted(script).turn("u1", "run-1").run_id == "run-1"
    assert len(script.requests) == 3

    script = Script(DOWN, 502, 200, body={**MEMORY, "similar": []})
    written = scripted(script).remember("u1", "tone", "formal", run_id="r1", tool_call_id="c1")
    assert written.id == "mem_1" and written.created_at.year == 2026
    assert len(script.requests) == 3


@pytest.mark.parametrize(
    "call",
    [
        lambda c: c.remember("u1", "tone", "formal"),
        lambda c: c.remember("u1", "tone", "formal", run_id="r1"),
        lambda c: c.record_message("t1", "u1", "user", "hello", run_id="r1"),
        lambda c: c.forget("mem_1", "u1"),
    ],
    ids=["remember", "remember with a run only", "record_message", "forget"],
)
def test_writes_that_would_repeat_are_never_retried(call):
    script = Script(DOWN, 200)
    with pytest.raises(ConnectionFailed):
        call(scripted(script))
    script = Script(503, 200)
    with pytest.raises(ServerError):
        call(scripted(script))
    assert len(script.requests) == 1


@pytest.mark.parametrize("status", [401, 403, 404, 409, 410, 422, 429])
def test_a_refusal_is_never_retried(status):
    script = Script(status, 200, body=HEALTHY)
    with pytest.raises(MemoryConsoleError) as refused:
        scripted(script).health()
    assert refused.value.status == status and len(script.requests) == 1


def test_each_status_has_its_error_class():
    classes = {status: type(error_for(status, "x")) for status in (401, 403, 404, 409, 410)}
    classes.update({status: type(error_for(status, "x")) for status in (422, 429, 500, 503)})
    assert classes == {
        401: Unauthorized,
        403: Forbidden,
        404: NotFound,
        409: MemoryConsoleError,
        410: Gone,
        422: ValidationError,
        429: RateLimited,
        500: ServerError,
        503: ServerError,
    }


def test_requests_carry_the_key_the_api_path_and_only_the_arguments_given():
    script = Script(201, body={**MEMORY, "similar": []})
    scripted(script).remember("acme/u1", "tone", "formal", run_id="r1")
    [request] = script.requests
    assert request.headers["Authorization"] == "Bearer mc_key"
    assert (request.method, request.url.path) == ("POST", "/api/v1/memories")
    assert json.loads(request.content) == {
        "actor": "acme/u1",
        "key": "tone",
        "fact": "formal",
        "run_id": "r1",
    }

    actor = {"ref": "acme/u1", "display_name": "", "scopes": []}
    script = Script(200, body=actor)
    scripted(script).put_actor("acme/u1", ["team:ops"])
    assert script.requests[0].url.raw_path == b"/api/v1/actors/acme/u1"
    assert json.loads(script.requests[0].content) == {"scopes": ["team:ops"]}

    message = {
        "id": "msg_1",
        "thread_id": "a/b?c",
        "run_id": None,
        "role": "user",
        "created_at": "2026-09-01T09:12:44.123456Z",
    }
    script = Script(201, body=message)
    scripted(script).record_message("a/b?c", "u1", "user", "hi")
    assert script.requests[0].url.raw_path == b"/api/v1/threads/a%2Fb%3Fc/messages"


def test_scopes_given_as_one_string_are_refused_before_sending():
    script = Script()
    with pytest.raises(TypeError, match=r"a list of scope tokens, e.g. \['team:ops'\]"):
        scripted(script).put_actor("u1", "team:ops")
    assert script.requests == []


def test_a_base_url_with_a_trailing_slash_gets_the_same_api_path():
    script = Script(200, body=HEALTHY)
    Client("http://memory.test/", "k", transport=httpx.MockTransport(script)).health()
    assert str(script.requests[0].url) == "http://memory.test/api/v1/health"
