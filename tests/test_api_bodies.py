"""The hot endpoints send bodies their services built (memory_console/api/bodies.py), not
re-validated by Ninja: each must still be exactly its declared response schema."""

from memory_console.api.schemas import MemoryPageOut, RememberOut, SearchOut, TurnOut
from memory_core import writes
from tests.helpers import bearer, post_turn


def exactly(schema, body: dict) -> None:
    """The body parses as the schema and holds nothing the schema does not declare."""
    assert schema.model_validate(body).model_dump() == body


def remember(client, secret, **body):
    return client.post(
        "/api/v1/memories", body, content_type="application/json", headers=bearer(secret)
    )


def test_turn_bodies_first_and_replayed_match_turn_out(org, operator, client):
    writes.publish(org.root, "units", "report distances in kilometres", principal=operator)
    writes.publish(org.acme, "fiscal-year", "October", principal=operator, pinned=True)
    learned = remember(
        client,
        org.acme_secret,
        actor="u1",
        key="fiscal-year",
        fact="they report on the calendar year",
        thread_id="th-1",
        run_id="r-1",
        tool_call_id="c-1",
    )
    assert learned.status_code == 201
    exactly(RememberOut, learned.json())
    first = post_turn(client, org.acme_secret, {"actor": "u1", "run_id": "run-b"})
    again = post_turn(client, org.acme_secret, {"actor": "u1", "run_id": "run-b"})
    assert first.status_code == again.status_code == 200
    assert first["Content-Type"] == "application/json; charset=utf-8"
    exactly(TurnOut, first.json())
    assert again.json() == first.json()
    entry = next(e for e in first.json()["entries"] if e["key"] == "fiscal-year")
    assert entry["origin"]["thread_id"] == "th-1"
    assert [o["scope"] for o in entry["overrides"]] == ["tenant:acme"]


def test_remember_repeat_body_matches_remember_out(org, client):
    body = {"actor": "u1", "key": "tone", "fact": "brief", "run_id": "r", "tool_call_id": "c"}
    first = remember(client, org.acme_secret, **body)
    repeat = remember(client, org.acme_secret, **body)
    assert (first.status_code, repeat.status_code) == (201, 200)
    exactly(RememberOut, repeat.json())
    assert repeat.json() == first.json()


def test_read_back_and_search_bodies_match_their_schemas(org, operator, client):
    writes.publish(org.root, "units", "report distances in kilometres", principal=operator)
    remember(client, org.acme_secret, actor="u1", key="units", fact="miles, they are in Ohio")
    page = client.get("/api/v1/memories?actor=u1", headers=bearer(org.acme_secret))
    assert page.status_code == 200
    exactly(MemoryPageOut, page.json())
    assert page.json()["count"] == 1
    found = client.get(
        "/api/v1/memories/search?actor=u1&q=distances", headers=bearer(org.acme_secret)
    )
    assert found.status_code == 200
    exactly(SearchOut, found.json())
    assert [item["key"] for item in found.json()["items"]] == ["units"]
