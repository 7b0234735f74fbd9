"""POST /turns over HTTP: the worked example, replay, registration, and every refusal."""

import pytest
from django.test import override_settings

from memory_core import writes
from memory_core.accounts import keys
from memory_core.models import AccessLog, Actor, Digest, DigestLine
from tests.helpers import bearer, post_turn

TURNS = "/api/v1/turns"


@pytest.fixture
def worked_example(org, operator, client):
    """Two global human policies, and u1's agent concluding otherwise about one of them."""
    units = writes.publish(org.root, "units", "report distances in kilometres", principal=operator)
    october = writes.publish(
        org.root, "fiscal-year", "the fiscal year starts in October", principal=operator
    )
    response = client.post(
        "/api/v1/memories",
        {"actor": "u1", "key": "fiscal-year", "fact": "they report on the calendar year"},
        content_type="application/json",
        headers=bearer(org.acme_secret),
    )
    assert response.status_code == 201
    return units, october, response.json()


def test_worked_example_end_to_end(org, client, worked_example):
    units, october, calendar = worked_example
    response = post_turn(client, org.acme_secret, {"actor": "u1", "run_id": "run_1"})
    assert response.status_code == 200
    turn = response.json()
    assert set(turn) == {"run_id", "actor", "scopes", "block", "entries", "lines", "stats"}
    assert (turn["run_id"], turn["actor"]) == ("run_1", "u1")
    assert turn["scopes"] == ["actor:acme/u1", "team:acme/ops", "tenant:acme", "global"]

    lines = turn["block"].split("\n")
    assert lines[0] == "<memory>" and lines[-1] == "</memory>"
    human = next(i for i, ln in enumerate(lines) if ln.startswith("Stated by people."))
    agent = next(i for i, ln in enumerate(lines) if ln.startswith("Concluded by you."))
    assert human < agent
    assert lines[human + 1] == "- [global] units: report distances in kilometres"
    assert lines[agent + 1] == "- [actor:acme/u1] fiscal-year: they report on the calendar year"
    assert lines[agent + 2] == "    ↳ [global] a person stated: the fiscal year starts in October"

    assert turn["lines"] == [
        {"n": 1, "text": lines[human + 1], "memory_id": units.uid},
        {"n": 2, "text": lines[agent + 1], "memory_id": calendar["id"]},
        {"n": 3, "text": lines[agent + 2], "memory_id": october.uid},
    ]
    fiscal = next(e for e in turn["entries"] if e["key"] == "fiscal-year")
    assert fiscal["id"] == calendar["id"] and fiscal["author"] == "agent"
    assert fiscal["origin"] == {
        "actor": "acme/u1",
        "thread_id": None,
        "run_id": None,
        "tool_call_id": None,
        "resolves": True,
    }
    assert fiscal["overrides"] == [
        {
            "id": october.uid,
            "scope": "global",
            "text": "the fiscal year starts in October",
            "author": "human",
        }
    ]
    units_entry = next(e for e in turn["entries"] if e["key"] == "units")
    assert units_entry["origin"] == {"user": "cli:test", "resolves": True}
    assert turn["stats"] == {
        "offered": 2,
        "omitted": 0,
        "pinned_omitted": 0,
        "recalled": 0,
        "prompt_chars": len(turn["block"]),
        "partial": False,
    }


def test_turn_stores_its_digest_and_logs_the_memory_ids_it_showed(org, client, worked_example):
    response = post_turn(
        client, org.acme_secret, {"actor": "u1", "run_id": "run_1", "thread_id": "thr_1"}
    )
    turn = response.json()
    digest = Digest.objects.get(actor=org.u1, run_id="run_1")
    assert digest.thread_ref == "thr_1" and digest.block == turn["block"]
    stored = list(DigestLine.objects.filter(digest=digest).values_list("n", "memory_uid"))
    assert stored == [(ln["n"], ln["memory_id"]) for ln in turn["lines"]]
    row = AccessLog.objects.get(action="turn")
    assert row.outcome == 200 and row.principal == org.acme_key.principal
    assert set(row.memory_ids) == {ln["memory_id"] for ln in turn["lines"]}
    assert "fiscal" not in str(row.detail) and "calendar" not in str(row.detail)


def test_a_repeated_run_is_byte_identical_after_memories_changed(
    org, client, operator, worked_example
):
    first = post_turn(client, org.acme_secret, {"actor": "u1", "run_id": "run_1"})
    writes.publish(org.acme, "tone", "keep answers short", principal=operator)
    client.post(
        "/api/v1/memories",
        {"actor": "u1", "key": "fiscal-year", "fact": "April to March"},
        content_type="application/json",
        headers=bearer(org.acme_secret),
    )
    again = post_turn(
        client, org.acme_secret, {"actor": "u1", "run_id": "run_1", "query": "anything"}
    )
    assert again.status_code == 200
    assert again.content == first.content
    assert again.json()["block"] == first.json()["block"]
    assert again.json()["lines"] == first.json()["lines"]
    assert Digest.objects.filter(actor=org.u1, run_id="run_1").count() == 1
    fresh = post_turn(client, org.acme_secret, {"actor": "u1", "run_id": "run_2"}).json()
    assert "April to March" in fresh["block"] and "keep answers short" in fresh["block"]


def test_a_turn_with_nothing_applicable_has_an_empty_block(org, client):
    response = post_turn(client, org.acme_secret, {"actor": "u2", "run_id": "run_1"})
    assert response.status_code == 200
    turn = response.json()
    assert turn["block"] == "" and turn["lines"] == [] and turn["entries"] == []
    assert turn["stats"]["offered"] == 0


def test_max_memories_lowers_the_budget_and_query_recalls(org, client, operator):
    writes.publish(org.acme, "shipping", "pallets ship on Tuesdays", principal=operator)
    writes.publish(org.acme, "lunch", "the canteen opens at noon", principal=operator)
    body = {"actor": "u1", "run_id": "run_1", "query": "canteen", "max_memories": 1}
    turn = post_turn(client, org.acme_secret, body).json()
    assert [e["key"] for e in turn["entries"]] == ["lunch"]
    assert turn["stats"]["recalled"] == 1 and turn["stats"]["partial"] is True


@override_settings(MEMORY_MAX_LINES=2)
def test_max_memories_never_raises_the_servers_limit(org, client, operator):
    for i in range(4):
        writes.publish(org.acme, f"k{i}", f"fact {i}", principal=operator)
    body = {"actor": "u1", "run_id": "run_1", "max_memories": 50}
    turn = post_turn(client, org.acme_secret, body).json()
    assert len(turn["entries"]) == 2 and turn["stats"]["omitted"] == 2


def test_first_turn_registers_an_unknown_actor_under_the_keys_reach(org, client):
    response = post_turn(client, org.acme_secret, {"actor": "newcomer", "run_id": "run_1"})
    assert response.status_code == 200
    assert response.json()["scopes"] == ["actor:acme/newcomer", "tenant:acme", "global"]
    assert Actor.objects.filter(ref="acme/newcomer").exists()


def test_a_global_key_registers_an_actor_with_only_its_own_scope_and_global(org, client):
    response = post_turn(client, org.global_secret, {"actor": "drifter", "run_id": "run_1"})
    assert response.json()["scopes"] == ["actor:drifter", "global"]


@pytest.mark.parametrize("secret", [None, "mc_not-a-real-key", "not even the prefix"])
def test_turn_without_a_valid_key_is_401(org, client, secret):
    response = post_turn(client, secret, {"actor": "u1", "run_id": "run_1"})
    assert response.status_code == 401
    assert response.json() == {"detail": "Unauthorized"}
    assert not Digest.objects.exists()


def test_turn_with_a_revoked_key_is_401(org, client, operator):
    keys.revoke_api_key(org.acme_key, principal=operator)
    response = post_turn(client, org.acme_secret, {"actor": "u1", "run_id": "run_1"})
    assert response.status_code == 401 and response.json() == {"detail": "Unauthorized"}
    assert not Digest.objects.exists()


def test_turn_with_a_non_bearer_scheme_is_401(org, client):
    response = client.post(
        TURNS,
        {"actor": "u1", "run_id": "run_1"},
        content_type="application/json",
        headers={"Authorization": f"Token {org.acme_secret}"},
    )
    assert response.status_code == 401


def test_turn_for_an_actor_outside_the_keys_reach_is_404_and_logged(org, client, worked_example):
    response = post_turn(client, org.globex_secret, {"actor": "acme/u1", "run_id": "run_x"})
    assert response.status_code == 404
    assert response.json() == {"detail": "actor 'acme/u1' not found"}
    assert not Digest.objects.filter(run_id="run_x").exists()
    row = AccessLog.objects.get(action="actor.lookup")
    assert (row.outcome, row.actor_ref, row.principal) == (
        404,
        "acme/u1",
        org.globex_key.principal,
    )
    assert row.memory_ids == []


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({"actor": "u1", "run_id": "run_1", "scope": "global"}, "unknown field: scope"),
        ({"actor": "u1", "run_id": "run_1", "max_memories": -1}, "max_memories"),
        ({"actor": "u1"}, "run_id: required"),
        ({"run_id": "run_1"}, "actor: required"),
        ({"actor": "u1", "run_id": ""}, "run_id"),
        ({"actor": "u1", "run_id": "r" * 129}, "128"),
        ({"actor": "u1", "run_id": "run_1", "thread_id": "t" * 129}, "thread_id"),
        ({"actor": "u1", "run_id": "run_1", "query": "q" * 2001}, "the limit is 2000"),
        ({"actor": "u1", "run_id": "run_1", "query": "a\x00b"}, "NUL"),
        ({"actor": "has space", "run_id": "run_1"}, "actor ref"),
        ({"actor": 7, "run_id": "run_1"}, "actor"),
    ],
)
def test_malformed_turn_requests_are_422_with_a_clear_detail(org, client, body, needle):
    response = post_turn(client, org.acme_secret, body)
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert isinstance(detail, str) and needle in detail
    assert not Digest.objects.exists()


def test_a_body_that_is_not_json_is_422(org, client):
    response = client.post(
        TURNS, "{not json", content_type="application/json", headers=bearer(org.acme_secret)
    )
    assert response.status_code == 422 and "detail" in response.json()


def test_a_turn_costs_a_handful_of_queries(
    org, client, worked_example, django_assert_max_num_queries
):
    # A first turn: key 1, actor with its chain 1, chain rows 1, the shown rows 1, and one
    # statement that holds the shown rows against forget and writes the digest, its lines
    # and the access-log row. A replay composes too (there is no look-up first), finds the
    # digest stored, then reads it and its lines and logs the read: 8.
    with django_assert_max_num_queries(5):
        post_turn(client, org.acme_secret, {"actor": "u1", "run_id": "run_q"})
    with django_assert_max_num_queries(8):
        post_turn(client, org.acme_secret, {"actor": "u1", "run_id": "run_q"})
