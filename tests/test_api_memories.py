"""/memories over HTTP: remember, read-back, search, get and forget, with every refusal."""

import json

import pytest
from django.test import override_settings

from memory_core import writes
from memory_core.accounts import keys
from memory_core.models import AccessLog, Actor, Digest, Embedding, Memory
from tests.helpers import bearer

MEMORIES = "/api/v1/memories"


def remember(client, secret, **body):
    return client.post(MEMORIES, body, content_type="application/json", headers=bearer(secret))


def get(client, secret, path, **params):
    return client.get(path, params, headers=bearer(secret))


def delete(client, secret, memory_id, actor):
    return client.delete(f"{MEMORIES}/{memory_id}?actor={actor}", headers=bearer(secret))


def assert_access_log_never_holds(*words):
    """The access log carries ids, scopes, counts and lengths: never a key or a fact."""
    for row in AccessLog.objects.all():
        stored = json.dumps(
            [row.principal, row.actor_ref, row.action, row.scope, row.memory_ids, row.detail]
        )
        for word in words:
            assert word not in stored, (row.action, stored)


@pytest.fixture
def allergy(org, client):
    """u1's agent remembered something sensitive; the response body is returned."""
    response = remember(
        client, org.acme_secret, actor="u1", key="allergy", fact="allergic to penicillin"
    )
    assert response.status_code == 201
    return response.json()


@pytest.fixture
def others(org, operator):
    """A tenant policy u1 sees, u2's own note, and x9's note in another tenant."""
    policy = writes.publish(org.acme, "units", "report in kilometres", principal=operator)
    u2_note = writes.remember(org.u2, "units", "u2 prefers miles", principal=org.acme_agent)
    x9_note = writes.remember(org.x9, "units", "x9 prefers leagues", principal=org.globex_agent)
    return policy, u2_note.memory, x9_note.memory


# --- POST /memories ---------------------------------------------------------------------


def test_remember_writes_at_the_actors_own_scope_as_agent(org, client):
    response = remember(
        client,
        org.acme_secret,
        actor="u1",
        key="allergy",
        fact="allergic to penicillin",
        run_id="run_1",
        tool_call_id="call_1",
        thread_id="thr_1",
    )
    assert response.status_code == 201
    body = response.json()
    memory = Memory.objects.get(uid=body["id"])
    assert (memory.scope.token, memory.key, memory.text) == (
        "actor:acme/u1",
        "allergy",
        "allergic to penicillin",
    )
    assert memory.author == "agent" and memory.origin_actor == org.u1
    assert body == {
        "id": memory.uid,
        "key": "allergy",
        "text": "allergic to penicillin",
        "scope": "actor:acme/u1",
        "pinned": False,
        "tags": [],
        "author": "agent",
        # thr_1 has no stored transcript, so its origin does not resolve.
        "origin": {
            "actor": "acme/u1",  # the stored, tenant-qualified ref
            "thread_id": "thr_1",
            "run_id": "run_1",
            "tool_call_id": "call_1",
            "resolves": False,
        },
        "created_at": memory.created_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "supersedes": None,
        "overrides": [],
        "similar": [],
    }
    row = AccessLog.objects.get(action="remember")
    assert (row.outcome, row.actor_ref, row.memory_ids) == (201, "acme/u1", [memory.uid])
    assert_access_log_never_holds("allergy", "penicillin")


def test_remember_supersedes_the_live_note_for_the_same_key(org, client, allergy):
    response = remember(client, org.acme_secret, actor="u1", key="allergy", fact="no allergies")
    assert response.status_code == 201
    assert response.json()["supersedes"] == allergy["id"]
    old = Memory.objects.get(uid=allergy["id"])
    assert old.retired_at is not None and old.retired_reason == "superseded"
    assert Memory.objects.live().filter(scope__token="actor:acme/u1", key="allergy").count() == 1


def test_remember_reports_the_wider_values_it_overrides(org, client, operator):
    october = writes.publish(org.root, "fiscal-year", "starts in October", principal=operator)
    april = writes.publish(org.acme, "fiscal-year", "starts in April", principal=operator)
    writes.publish(org.globex, "fiscal-year", "globex: starts in July", principal=operator)
    response = remember(
        client, org.acme_secret, actor="u1", key="fiscal-year", fact="calendar year"
    )
    assert response.json()["overrides"] == [
        {"id": april.uid, "scope": "tenant:acme", "text": "starts in April", "author": "human"},
        {"id": october.uid, "scope": "global", "text": "starts in October", "author": "human"},
    ]


def test_the_same_tool_call_twice_writes_once(org, client):
    call = {"actor": "u1", "key": "tz", "fact": "lives in Lisbon", "run_id": "r1"}
    first = remember(client, org.acme_secret, **call, tool_call_id="c1")
    again = remember(client, org.acme_secret, **call, tool_call_id="c1")
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json() == first.json()
    assert Memory.objects.filter(key="tz").count() == 1
    outcomes = list(AccessLog.objects.filter(action="remember").values_list("outcome", flat=True))
    assert sorted(outcomes) == [200, 201]


def test_remember_registers_an_actor_seen_for_the_first_time(org, client):
    response = remember(client, org.acme_secret, actor="u5", key="tz", fact="Lisbon")
    assert response.status_code == 201 and response.json()["scope"] == "actor:acme/u5"
    assert Actor.objects.filter(ref="acme/u5").exists()


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({"scope": "global"}, "unknown field: scope"),
        ({"scope": "actor:acme/u1"}, "unknown field: scope"),
        ({"fact": "x" * 241}, "240"),
        ({"fact": "first line\nsecond line"}, "single line"),
        ({"fact": "   "}, "fact is empty"),
        ({"fact": "a\x00b"}, "NUL"),
        ({"fact": "half \ud800 a pair"}, "surrogate"),
        ({"key": "Not A Key"}, "key must"),
        ({"key": ""}, "key is empty"),
        ({"key": "k" * 65}, "the limit is 64"),
        ({"run_id": "r" * 129}, "run_id"),
        ({"tool_call_id": "c" * 129}, "tool_call_id"),
        ({"actor": "no spaces allowed"}, "actor ref"),
        ({"fact": None}, "fact"),
    ],
)
def test_malformed_remember_is_422_and_writes_nothing(org, client, body, needle):
    sent = {"actor": "u1", "key": "note", "fact": "a fine fact", **body}
    response = remember(client, org.acme_secret, **sent)
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert isinstance(detail, str) and needle in detail
    assert not Memory.objects.filter(origin_actor=org.u1).exists()


def test_an_over_long_fact_is_refused_naming_the_configured_limit(org, client):
    with override_settings(MEMORY_MAX_FACT_CHARS=100):
        response = remember(client, org.acme_secret, actor="u1", key="note", fact="y" * 101)
    assert response.status_code == 422
    assert response.json() == {"detail": "fact is 101 characters; the limit is 100 characters"}
    row = AccessLog.objects.get(action="remember")
    assert row.outcome == 422 and row.detail == {"reason": "bad_fact"}


@pytest.mark.parametrize("secret", [None, "mc_unknown", "garbage"])
def test_remember_without_a_valid_key_is_401(org, client, secret):
    response = remember(client, secret, actor="u1", key="note", fact="a fact")
    assert response.status_code == 401 and response.json() == {"detail": "Unauthorized"}
    assert not Memory.objects.exists()


def test_remember_with_a_revoked_key_is_401(org, client, operator):
    keys.revoke_api_key(org.acme_key, principal=operator)
    response = remember(client, org.acme_secret, actor="u1", key="note", fact="a fact")
    assert response.status_code == 401
    assert not Memory.objects.exists()


def test_remember_for_an_actor_outside_the_keys_reach_is_404(org, client):
    response = remember(client, org.globex_secret, actor="acme/u1", key="note", fact="planted")
    assert response.status_code == 404
    assert response.json() == {"detail": "actor 'acme/u1' not found"}
    assert not Memory.objects.exists()
    row = AccessLog.objects.get(action="actor.lookup")
    assert (row.outcome, row.actor_ref, row.principal) == (
        404,
        "acme/u1",
        org.globex_key.principal,
    )


def test_remember_costs_a_bounded_number_of_queries(
    org, client, operator, django_assert_max_num_queries
):
    writes.publish(org.root, "fiscal-year", "starts in October", principal=operator)
    call = {"actor": "u1", "key": "fiscal-year", "fact": "calendar year", "run_id": "r1"}
    # Measured: 5 for a first write. The request's own: the key with its reach and the actor
    # with its chain. The service's: one call of memory_core_remember (writes.sql: the slot
    # lock, the live row, the tool-call check, the retire and insert, the vector, the
    # near-duplicates, the ledger append and the access-log row), with the overrides' wider
    # rows in the same statement, and the savepoint round it under the test's transaction
    # (none outside one). No read of the run's recorded chain: an agent writes only at its
    # actor's own scope, which heads every chain (writes.remember). A repeated tool call: 6
    # (the stored version is loaded by the ORM).
    with django_assert_max_num_queries(5):
        assert remember(client, org.acme_secret, **call, tool_call_id="c1").status_code == 201
    with django_assert_max_num_queries(6):
        assert remember(client, org.acme_secret, **call, tool_call_id="c1").status_code == 200


# --- POST /memories: near-duplicates under another key (`similar`) ----------------------

COFFEE = "drinks oat milk flat whites every morning"
REWORDED = "has an oat milk flat white each morning"


def test_remember_names_the_other_key_that_holds_nearly_the_same_fact(org, client):
    coffee = remember(client, org.acme_secret, actor="u1", key="coffee", fact=COFFEE).json()
    assert coffee["similar"] == []
    again = remember(client, org.acme_secret, actor="u1", key="morning_coffee", fact=REWORDED)
    assert again.status_code == 201
    assert again.json()["similar"] == [
        {"id": coffee["id"], "key": "coffee", "scope": "actor:acme/u1"}
    ]
    # The row that named it is on record as a read of it (ids, never a key); the row's
    # memory ids stay the one written, which is what a write's row is found by.
    row = AccessLog.objects.filter(action="remember").order_by("id").last()
    assert row.memory_ids == [again.json()["id"]]
    assert row.detail["similar"] == [coffee["id"]]
    assert_access_log_never_holds("coffee", "oat milk")


def test_an_unrelated_fact_or_the_same_key_again_has_nothing_similar(org, client):
    remember(client, org.acme_secret, actor="u1", key="coffee", fact=COFFEE)
    other = remember(client, org.acme_secret, actor="u1", key="pet", fact="owns a beagle")
    assert other.json()["similar"] == []
    # The same key again supersedes: the version it replaces is no other key.
    same = remember(client, org.acme_secret, actor="u1", key="coffee", fact=REWORDED)
    assert same.json()["supersedes"] and same.json()["similar"] == []


@override_settings(MEMORY_EMBEDDER="none")
def test_without_an_embedder_the_same_words_are_still_found(org, client):
    units = remember(client, org.acme_secret, actor="u1", key="units", fact="prefers kilometres")
    again = remember(
        client, org.acme_secret, actor="u1", key="distance", fact="prefers kilometres always"
    )
    assert [s["key"] for s in again.json()["similar"]] == ["units"]
    assert again.json()["similar"][0]["id"] == units.json()["id"]


def test_a_memory_written_without_a_vector_is_still_compared_by_its_words(org, client):
    with override_settings(MEMORY_EMBEDDER="none"):
        units = remember(
            client, org.acme_secret, actor="u1", key="units", fact="prefers kilometres"
        )
    unembedded = Memory.objects.get(uid=units.json()["id"])
    assert not Embedding.objects.filter(memory=unembedded, vector__isnull=False).exists()
    again = remember(
        client, org.acme_secret, actor="u1", key="distance", fact="prefers kilometres always"
    )
    assert again.json()["similar"] == [
        {"id": units.json()["id"], "key": "units", "scope": "actor:acme/u1"}
    ]


def test_similar_never_names_another_actors_or_another_tenants_or_a_wider_memory(
    org, client, operator
):
    # The same fact, word for word, held by u2 (same tenant), x9 (another tenant) and the
    # tenant itself (in u1's chain, but not u1's own: the agent could not correct it).
    writes.remember(org.u2, "coffee", COFFEE, principal=org.acme_agent)
    writes.remember(org.x9, "coffee", COFFEE, principal=org.globex_agent)
    writes.publish(org.acme, "coffee", COFFEE, principal=operator)
    mine = remember(client, org.acme_secret, actor="u1", key="morning_coffee", fact=COFFEE)
    assert mine.status_code == 201 and mine.json()["similar"] == []
    # And the other way round: x9's agent is never told of u1's.
    theirs = remember(client, org.globex_secret, actor="x9", key="drink", fact=COFFEE)
    assert [s["scope"] for s in theirs.json()["similar"]] == ["actor:globex/x9"]


def test_a_repeated_tool_call_answers_the_same_similar(org, client):
    coffee = remember(client, org.acme_secret, actor="u1", key="coffee", fact=COFFEE).json()
    call = {"actor": "u1", "key": "morning_coffee", "fact": REWORDED}
    first = remember(client, org.acme_secret, **call, run_id="r", tool_call_id="c")
    repeat = remember(client, org.acme_secret, **call, run_id="r", tool_call_id="c")
    assert (first.status_code, repeat.status_code) == (201, 200)
    assert repeat.json() == first.json()
    assert [s["id"] for s in repeat.json()["similar"]] == [coffee["id"]]


# --- GET /memories (read-back) ----------------------------------------------------------


@override_settings(MEMORY_MAX_LINES=2)
def test_read_back_lists_every_applicable_key_uncapped_with_overrides(org, client, others, allergy):
    policy, u2_note, x9_note = others
    mine = remember(client, org.acme_secret, actor="u1", key="units", fact="nautical miles")
    remember(client, org.acme_secret, actor="u1", key="tz", fact="Lisbon")
    response = get(client, org.acme_secret, MEMORIES, actor="u1")
    assert response.status_code == 200
    page = response.json()
    assert page["count"] == 3
    by_key = {item["key"]: item for item in page["items"]}
    assert set(by_key) == {"allergy", "tz", "units"}
    assert by_key["units"]["id"] == mine.json()["id"]
    assert [o["id"] for o in by_key["units"]["overrides"]] == [policy.uid]
    assert u2_note.uid not in response.content.decode()
    assert x9_note.uid not in response.content.decode()
    row = AccessLog.objects.get(action="read_back")
    assert row.outcome == 200 and row.count == 3
    assert set(row.memory_ids) == {item["id"] for item in page["items"]}
    assert_access_log_never_holds("penicillin", "Lisbon", "nautical")


def test_read_back_pages_with_limit_and_offset_and_filters_by_thread(org, client):
    for i in range(5):
        remember(
            client,
            org.acme_secret,
            actor="u1",
            key=f"k{i}",
            fact=f"fact {i}",
            thread_id="thr_a" if i % 2 else "thr_b",
        )
    page = get(client, org.acme_secret, MEMORIES, actor="u1", limit=2, offset=2).json()
    assert page["count"] == 5 and [i["key"] for i in page["items"]] == ["k2", "k3"]
    page = get(client, org.acme_secret, MEMORIES, actor="u1", thread_id="thr_a").json()
    assert page["count"] == 2
    assert {i["origin"]["thread_id"] for i in page["items"]} == {"thr_a"}


@pytest.mark.parametrize(
    ("params", "needle"),
    [
        ({"limit": -1}, "limit"),
        ({"limit": 0}, "limit"),
        ({"limit": 201}, "limit"),
        ({"offset": -1}, "offset"),
        ({"limit": "many"}, "limit"),
        ({"actor": "bad ref"}, "actor ref"),
    ],
)
def test_read_back_refuses_bad_parameters_with_422(org, client, params, needle):
    response = get(client, org.acme_secret, MEMORIES, **{"actor": "u1", **params})
    assert response.status_code == 422 and needle in response.json()["detail"]


def test_read_back_needs_an_actor(org, client):
    response = client.get(MEMORIES, headers=bearer(org.acme_secret))
    assert response.status_code == 422 and response.json() == {"detail": "actor: required"}


def test_read_back_of_an_actor_outside_the_keys_reach_is_404_like_an_unknown_one(
    org, client, allergy
):
    hidden = get(client, org.globex_secret, MEMORIES, actor="acme/u1")
    unknown = get(client, org.globex_secret, MEMORIES, actor="acme/u0")
    assert (hidden.status_code, unknown.status_code) == (404, 404)
    assert hidden.json()["detail"] == unknown.json()["detail"].replace("u0", "u1")
    assert "penicillin" not in hidden.content.decode()
    assert AccessLog.objects.filter(
        action="actor.lookup", outcome=404, actor_ref="acme/u1"
    ).exists()
    assert not Actor.objects.filter(ref="acme/u0").exists()


@pytest.mark.parametrize("path", ["", "/search", "/mem_00000000000000000000000000"])
def test_reads_without_a_live_key_are_401(org, client, operator, path):
    params = {"actor": "u1", "q": "anything"}
    assert get(client, None, MEMORIES + path, **params).status_code == 401
    assert get(client, "mc_nope", MEMORIES + path, **params).status_code == 401
    keys.revoke_api_key(org.acme_key, principal=operator)
    response = get(client, org.acme_secret, MEMORIES + path, **params)
    assert response.status_code == 401 and response.json() == {"detail": "Unauthorized"}
    assert not AccessLog.objects.filter(action__in=["read_back", "search", "memory.get"]).exists()


# --- GET /memories/search ---------------------------------------------------------------


@override_settings(MEMORY_EMBEDDER="none")  # the lexical tiers
def test_search_finds_within_the_chain_only(org, client, others, allergy):
    policy, u2_note, x9_note = others
    response = get(client, org.acme_secret, f"{MEMORIES}/search", actor="u1", q="penicillin")
    assert response.status_code == 200
    body = response.json()
    assert body["tier"] == "fts" and [i["id"] for i in body["items"]] == [allergy["id"]]
    leak = get(client, org.acme_secret, f"{MEMORIES}/search", actor="u1", q="prefers").json()
    assert leak["items"] == []
    row = AccessLog.objects.filter(action="search").first()
    assert row.outcome == 200 and row.detail["query_chars"] == len("prefers")
    assert_access_log_never_holds("penicillin", "prefers")


@override_settings(MEMORY_EMBEDDER="none")  # the lexical tiers
def test_search_falls_back_to_trigram_for_a_typo(org, client, allergy):
    # A typo near the end is a prefix of the word, which full text finds ...
    body = get(client, org.acme_secret, f"{MEMORIES}/search", actor="u1", q="penicilin").json()
    assert body["tier"] == "fts" and [i["id"] for i in body["items"]] == [allergy["id"]]
    # ... one near the start is left to the trigram tier.
    body = get(client, org.acme_secret, f"{MEMORIES}/search", actor="u1", q="pennicillin").json()
    assert body["tier"] == "trigram" and [i["id"] for i in body["items"]] == [allergy["id"]]


def test_search_is_not_taken_for_a_memory_id(org, client):
    response = get(client, org.acme_secret, f"{MEMORIES}/search", actor="u1")
    assert response.status_code == 422 and response.json() == {"detail": "q: required"}


@pytest.mark.parametrize(
    ("params", "needle"),
    [({"limit": 0}, "limit"), ({"limit": 101}, "limit"), ({"q": "x" * 2001}, "2000")],
)
def test_search_refuses_bad_parameters_with_422(org, client, params, needle):
    query = {"actor": "u1", "q": "anything", **params}
    response = get(client, org.acme_secret, f"{MEMORIES}/search", **query)
    assert response.status_code == 422 and needle in response.json()["detail"]


def test_search_outside_the_keys_reach_is_404_and_without_a_key_401(org, client, allergy):
    hidden = get(client, org.globex_secret, f"{MEMORIES}/search", actor="u1", q="penicillin")
    assert hidden.status_code == 404 and "penicillin" not in hidden.content.decode()
    assert get(client, None, f"{MEMORIES}/search", actor="u1", q="x").status_code == 401


# --- GET /memories/{id} -----------------------------------------------------------------


def test_get_returns_a_live_memory_in_the_chain_with_its_overrides(org, client, operator):
    policy = writes.publish(org.acme, "units", "report in kilometres", principal=operator)
    mine = remember(client, org.acme_secret, actor="u1", key="units", fact="miles").json()
    response = get(client, org.acme_secret, f"{MEMORIES}/{mine['id']}", actor="u1")
    assert mine.pop("similar") == []  # remember's answer alone says what is like it
    assert response.status_code == 200 and response.json() == mine
    assert [o["id"] for o in mine["overrides"]] == [policy.uid]
    wider = get(client, org.acme_secret, f"{MEMORIES}/{policy.uid}", actor="u1")
    assert wider.status_code == 200
    assert wider.json()["scope"] == "tenant:acme" and wider.json()["overrides"] == []
    rows = AccessLog.objects.filter(action="memory.get").order_by("id")
    assert [(r.outcome, r.memory_ids, r.scope) for r in rows] == [
        (200, [mine["id"]], "actor:acme/u1"),
        (200, [policy.uid], "tenant:acme"),
    ]
    assert_access_log_never_holds("units", "miles", "kilometres")


def test_get_of_anything_the_actor_cannot_see_is_404(org, client, others, allergy):
    policy, u2_note, x9_note = others
    retired = allergy["id"]
    remember(client, org.acme_secret, actor="u1", key="allergy", fact="no allergies")
    unknown = "mem_00000000000000000000000000"
    for memory_id in [u2_note.uid, x9_note.uid, retired, unknown, "not-an-id"]:
        response = get(client, org.acme_secret, f"{MEMORIES}/{memory_id}", actor="u1")
        assert response.status_code == 404, memory_id
        assert response.json() == {"detail": "memory not found"}
    refusals = AccessLog.objects.filter(action="memory.get", outcome=404).order_by("id")
    assert [r.memory_ids for r in refusals] == [
        [u2_note.uid],
        [x9_note.uid],
        [retired],
        [unknown],
        [],
    ]
    assert all(r.actor_ref == "acme/u1" for r in refusals)


def test_get_for_an_actor_outside_the_keys_reach_is_404(org, client, allergy):
    response = get(client, org.globex_secret, f"{MEMORIES}/{allergy['id']}", actor="u1")
    assert response.status_code == 404 and "penicillin" not in response.content.decode()
    assert get(client, None, f"{MEMORIES}/{allergy['id']}", actor="u1").status_code == 401


# --- DELETE /memories/{id} --------------------------------------------------------------


def test_forget_of_an_own_memory_is_204_and_erases_every_version(org, client, allergy):
    second = remember(client, org.acme_secret, actor="u1", key="allergy", fact="also latex")
    client.post(
        "/api/v1/turns",
        {"actor": "u1", "run_id": "run_1"},
        content_type="application/json",
        headers=bearer(org.acme_secret),
    )
    response = delete(client, org.acme_secret, second.json()["id"], "u1")
    assert response.status_code == 204 and response.content == b""
    assert not Memory.objects.filter(uid__in=[allergy["id"], second.json()["id"]]).exists()
    after = get(client, org.acme_secret, f"{MEMORIES}/{second.json()['id']}", actor="u1")
    assert after.status_code == 404
    digest = Digest.objects.get(run_id="run_1")
    assert "latex" not in digest.block and "[forgotten]" in digest.block
    row = AccessLog.objects.get(action="forget", outcome=204)
    assert set(row.memory_ids) == {allergy["id"], second.json()["id"]} and row.count == 2
    assert_access_log_never_holds("allergy", "penicillin", "latex")


def test_forget_through_a_retired_version_erases_the_whole_chain(org, client, allergy):
    second = remember(client, org.acme_secret, actor="u1", key="allergy", fact="also latex")
    assert delete(client, org.acme_secret, allergy["id"], "u1").status_code == 204
    assert not Memory.objects.filter(uid__in=[allergy["id"], second.json()["id"]]).exists()


def test_forget_of_a_wider_memory_the_actor_sees_is_403(org, client, others):
    policy, _, _ = others
    response = delete(client, org.acme_secret, policy.uid, "u1")
    assert response.status_code == 403 and "wider scope" in response.json()["detail"]
    assert Memory.objects.filter(uid=policy.uid, retired_at=None).exists()
    row = AccessLog.objects.get(action="forget")
    assert row.outcome == 403 and row.detail == {"reason": "forbidden"}


def test_forget_of_another_actors_memory_is_404(org, client, others):
    _, u2_note, _ = others
    response = delete(client, org.acme_secret, u2_note.uid, "u1")
    assert response.status_code == 404 and response.json() == {"detail": "memory not found"}
    assert Memory.objects.filter(uid=u2_note.uid).exists()


def test_forget_of_another_tenants_memory_is_404(org, client, others):
    _, _, x9_note = others
    assert delete(client, org.acme_secret, x9_note.uid, "u1").status_code == 404
    assert Memory.objects.filter(uid=x9_note.uid).exists()
    # Asking as x9 itself with the acme key is the same 404: x9 is out of that key's reach.
    assert delete(client, org.acme_secret, x9_note.uid, "x9").status_code == 404
    assert Memory.objects.filter(uid=x9_note.uid).exists()


def test_forget_of_an_unknown_or_already_forgotten_id_is_404_and_logged(org, client, allergy):
    assert delete(client, org.acme_secret, allergy["id"], "u1").status_code == 204
    again = delete(client, org.acme_secret, allergy["id"], "u1")
    unknown = delete(client, org.acme_secret, "mem_00000000000000000000000000", "u1")
    assert (again.status_code, unknown.status_code) == (404, 404)
    assert again.json() == unknown.json() == {"detail": "memory not found"}
    refusals = AccessLog.objects.filter(action="forget", outcome=404).order_by("id")
    assert [r.memory_ids for r in refusals] == [
        [allergy["id"]],
        ["mem_00000000000000000000000000"],
    ]


def test_forget_outside_the_keys_reach_is_404_and_without_a_key_401(org, client, allergy):
    assert delete(client, org.globex_secret, allergy["id"], "u1").status_code == 404
    assert delete(client, None, allergy["id"], "u1").status_code == 401
    assert delete(client, "mc_revoked?", allergy["id"], "u1").status_code == 401
    assert Memory.objects.filter(uid=allergy["id"]).exists()


def test_forget_with_a_revoked_key_is_401(org, client, operator, allergy):
    keys.revoke_api_key(org.acme_key, principal=operator)
    assert delete(client, org.acme_secret, allergy["id"], "u1").status_code == 401
    assert Memory.objects.filter(uid=allergy["id"]).exists()


def test_forget_needs_an_actor(org, client, allergy):
    response = client.delete(f"{MEMORIES}/{allergy['id']}", headers=bearer(org.acme_secret))
    assert response.status_code == 422 and response.json() == {"detail": "actor: required"}


def test_forget_of_the_id_search_is_404_like_any_unknown_id(org, client):
    response = client.delete(f"{MEMORIES}/search?actor=u1", headers=bearer(org.acme_secret))
    assert response.status_code == 404 and response.json() == {"detail": "memory not found"}
    assert get(client, org.acme_secret, f"{MEMORIES}/search", actor="u1").status_code == 422
