"""Reach and visibility as properties, over random organisations.

For random tenants, teams, memberships, actors and memories (some superseded) at random
scopes: no endpoint (turn, read-back, search, get) returns or reveals a memory outside the
actor's chain, every GET/DELETE of an id the actor cannot see is a 404, and a key that does
not reach the actor gets a 404 everywhere. The oracle is computed from the generated world,
not from the query helpers under test.

Each example builds its own data with unique names inside the test's one transaction (the
`db` fixture), so examples accumulate; the checks hold whatever else is in the database.
"""

import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_core import actors, writes
from memory_core.accounts import keys
from memory_core.accounts.principals import Principal
from memory_core.models import Memory
from tests.helpers import bearer

MEMORY_KEYS = ["tone", "units", "fiscal-year"]


# Every tenant draws its people's refs and its team names from the same small pools, so
# tenants reuse one another's names (names are per tenant, docs/architecture/rules.md, "Names are
# per tenant").
REFS = ["u1", "u2", "jane.doe@example.com"]


@st.composite
def worlds(draw):
    tenants = draw(st.lists(st.integers(0, 2), min_size=1, max_size=3))  # teams per tenant
    people = []
    for tenant, team_count in enumerate(tenants):
        refs = draw(st.lists(st.sampled_from(REFS), unique=True, max_size=2))
        for ref in refs:
            teams = draw(st.permutations(range(team_count)))
            people.append((tenant, ref, teams[: draw(st.integers(0, len(teams)))]))
    holders = [("global",)]
    holders += [("tenant", t) for t in range(len(tenants))]
    holders += [("team", t, j) for t, n in enumerate(tenants) for j in range(n)]
    holders += [("actor", a) for a in range(len(people))]
    notes = draw(
        st.lists(
            st.tuples(st.sampled_from(holders), st.sampled_from(MEMORY_KEYS), st.integers(1, 2)),
            max_size=8,
        )
    )
    return {"tenants": tenants, "people": people, "notes": notes}


class World:
    """The generated organisation, built through the services, plus its own bookkeeping.

    Tenants are named afresh per example; inside them, teams (`team:t0`, `team:t1`) and
    actor refs repeat from tenant to tenant, named relative to each tenant's key."""

    def __init__(self, spec, operator):
        tag = uuid.uuid4().hex[:10]
        root = actors.global_scope()
        self.names, self.tenants, self.teams, self.secrets, self.api_keys = [], [], [], [], []
        for t, team_count in enumerate(spec["tenants"]):
            name = f"p{tag}-{t}"
            tenant, _ = actors.ensure_scope(f"tenant:{name}", root, principal=operator)
            self.names.append(name)
            self.tenants.append(tenant)
            self.teams.append(
                [
                    actors.ensure_scope(f"team:{name}/t{j}", tenant, principal=operator)[0]
                    for j in range(team_count)
                ]
            )
            key, secret = keys.create_api_key(f"host {t}", tenant, principal=operator)
            self.api_keys.append(key)
            self.secrets.append(secret)
        self.people = []  # (actor, tenant index, ref as the tenant's key names it, chain)
        for t, ref, team_indexes in spec["people"]:
            key = self.api_keys[t]
            relative = [f"team:t{j}" for j in team_indexes]
            actor = actors.put_actor(ref, "", relative, key, Principal.for_api_key(key))
            chain = [
                f"actor:{self.names[t]}/{ref}",
                *[self.teams[t][j].token for j in team_indexes],
                self.tenants[t].token,
                "global",
            ]
            self.people.append((actor, t, ref, chain))
        self.notes = {}  # uid -> text, for every version written in this world
        for n, (holder, key, versions) in enumerate(spec["notes"]):
            for v in range(versions):
                text = f"note zq{tag}n{n}v{v}"
                memory = self._write(holder, key, text, operator)
                self.notes[memory.uid] = text

    def _write(self, holder, key, text, operator):
        if holder[0] == "actor":
            actor, t, _, _ = self.people[holder[1]]
            agent = Principal.for_api_key(self.api_keys[t])
            return writes.remember(actor, key, text, principal=agent).memory
        if holder[0] == "global":
            scope = actors.global_scope()
        elif holder[0] == "tenant":
            scope = self.tenants[holder[1]]
        else:
            scope = self.teams[holder[1]][holder[2]]
        return writes.publish(scope, key, text, principal=operator)


def shown_ids(items):
    """Every memory id a list of memory shapes reveals, overrides included."""
    ids = set()
    for item in items:
        ids.add(item["id"])
        ids.update(o["id"] for o in item["overrides"])
    return ids


def assert_reveals_nothing_hidden(response, hidden_texts):
    body = response.content.decode()
    for text in hidden_texts:
        assert text not in body


@pytest.mark.slow  # a generated world per example, every endpoint asked
@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(spec=worlds())
def test_no_endpoint_reveals_a_memory_outside_the_actors_chain(db, client, operator, spec):
    world = World(spec, operator)
    rows = {m.uid: m for m in Memory.objects.select_related("scope")}
    for actor, t, ref, chain in world.people:
        auth = bearer(world.secrets[t])
        live_in_chain = {
            uid for uid, m in rows.items() if m.scope.token in chain and m.retired_at is None
        }
        hidden_texts = [
            text for uid, text in world.notes.items() if rows[uid].scope.token not in chain
        ]

        got = client.get(f"/api/v1/actors/{ref}", headers=auth)
        assert got.json()["scopes"] == chain

        turn = client.post(
            "/api/v1/turns",
            {"actor": ref, "run_id": f"run-{uuid.uuid4().hex}"},
            content_type="application/json",
            headers=auth,
        )
        assert turn.status_code == 200
        body = turn.json()
        assert shown_ids(body["entries"]) <= live_in_chain
        assert {line["memory_id"] for line in body["lines"]} <= live_in_chain
        assert_reveals_nothing_hidden(turn, hidden_texts)

        read_back = client.get("/api/v1/memories", {"actor": ref, "limit": 200}, headers=auth)
        page = read_back.json()
        assert shown_ids(page["items"]) <= live_in_chain
        # Every key with a live value in the chain is listed once, and nothing else is.
        assert sorted(item["key"] for item in page["items"]) == sorted(
            {rows[uid].key for uid in live_in_chain}
        )
        assert page["count"] == len(page["items"])
        assert_reveals_nothing_hidden(read_back, hidden_texts)

        search = client.get(
            "/api/v1/memories/search", {"actor": ref, "q": "note", "limit": 100}, headers=auth
        )
        assert search.status_code == 200
        assert shown_ids(search.json()["items"]) <= live_in_chain
        assert_reveals_nothing_hidden(search, hidden_texts)

        # Semantic recall: a query made of a hidden note's own words has that note's vector
        # (the closest there is) and shares its every word; it must still find nothing
        # outside the chain, in a search or in a turn.
        for text in hidden_texts[:2]:
            close = client.get(
                "/api/v1/memories/search", {"actor": ref, "q": text, "limit": 100}, headers=auth
            )
            assert close.status_code == 200
            assert shown_ids(close.json()["items"]) <= live_in_chain
            assert_reveals_nothing_hidden(close, hidden_texts)
            asked = client.post(
                "/api/v1/turns",
                {"actor": ref, "run_id": f"run-{uuid.uuid4().hex}", "query": text},
                content_type="application/json",
                headers=auth,
            )
            assert {line["memory_id"] for line in asked.json()["lines"]} <= live_in_chain
            assert_reveals_nothing_hidden(asked, hidden_texts)

        for uid in world.notes:
            one = client.get(f"/api/v1/memories/{uid}", {"actor": ref}, headers=auth)
            assert one.status_code == (200 if uid in live_in_chain else 404), uid
            if rows[uid].scope.token not in chain:
                gone = client.delete(f"/api/v1/memories/{uid}?actor={ref}", headers=auth)
                assert gone.status_code == 404, uid
                assert Memory.objects.filter(uid=uid).exists()
            elif rows[uid].scope.token != chain[0]:
                refused = client.delete(f"/api/v1/memories/{uid}?actor={ref}", headers=auth)
                assert refused.status_code == 403, uid

        # A key whose reach is another tenant: the actor, named qualified, does not exist
        # for it (its own `ref`, if any, is another person, checked as that person).
        for other, secret in enumerate(world.secrets):
            if other == t:
                continue
            foreign = bearer(secret)
            answers = [
                client.get(f"/api/v1/actors/{actor.ref}", headers=foreign),
                client.post(
                    "/api/v1/turns",
                    {"actor": actor.ref, "run_id": "probe"},
                    content_type="application/json",
                    headers=foreign,
                ),
                client.get("/api/v1/memories", {"actor": actor.ref}, headers=foreign),
                client.get(
                    "/api/v1/memories/search", {"actor": actor.ref, "q": "note"}, headers=foreign
                ),
            ]
            for uid in world.notes:
                answers.append(
                    client.get(f"/api/v1/memories/{uid}", {"actor": actor.ref}, headers=foreign)
                )
                answers.append(
                    client.delete(f"/api/v1/memories/{uid}?actor={actor.ref}", headers=foreign)
                )
            for answer in answers:
                assert answer.status_code == 404
                assert answer.json() == {"detail": f"actor {actor.ref!r} not found"}
    # Squatting: every tenant may still register every name in the pool for itself, and
    # that touches no other tenant's actor.
    chains = {actor.pk: actors.chain_of(actor) for actor, _, _, _ in world.people}
    for t, secret in enumerate(world.secrets):
        for ref in REFS:
            answer = client.post(
                "/api/v1/turns",
                {"actor": ref, "run_id": f"squat-{uuid.uuid4().hex}"},
                content_type="application/json",
                headers=bearer(secret),
            )
            assert answer.status_code == 200
            assert answer.json()["scopes"][0] == f"actor:{world.names[t]}/{ref}"
    for actor, _, _, _ in world.people:
        actor.__dict__.pop("membership_tokens", None)
        assert actors.chain_of(actor) == chains[actor.pk]
    assert set(world.notes) <= set(Memory.objects.values_list("uid", flat=True))
