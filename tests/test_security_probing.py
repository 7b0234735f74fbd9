"""Cross-tenant probing: a second API key, whose reach is another tenant, replays every id
the first key's responses revealed (memory ids, actor refs, run ids, thread ids, tool-call
ids) against every endpoint. Every probe is a 404 that looks like an unknown id, writes
nothing, and leaves an access-log row with the prober's principal and outcome 404."""

import re

import pytest

from memory_core import writes
from memory_core.models import AccessLog, Actor, Digest, LedgerEvent, Memory, Message, Thread
from memory_core.rules.scopes import KEY_RE
from tests.helpers import bearer

SECRET_TEXTS = ["allergic to penicillin", "penicillin and latex", "my allergy results"]
MEMORY_ID = re.compile(r"mem_[0-9A-Z]{26}")


def stored():
    return {
        model.__name__: model.objects.count()
        for model in (Memory, Digest, Message, Thread, Actor, LedgerEvent)
    }


def walk(value):
    """Every (key, value) pair in a JSON document, at any depth."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key, item
            yield from walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk(item)


class Learned:
    def __init__(self):
        self.memory_ids, self.actors, self.runs, self.threads, self.tool_calls = (
            set(),
            set(),
            set(),
            set(),
            set(),
        )

    def take(self, document):
        for key, value in walk(document):
            if isinstance(value, str):
                self.memory_ids.update(MEMORY_ID.findall(value))
                if key in {"actor", "ref"}:
                    self.actors.add(value)
                elif key == "run_id":
                    self.runs.add(value)
                elif key == "thread_id":
                    self.threads.add(value)
                elif key == "tool_call_id":
                    self.tool_calls.add(value)


@pytest.fixture
def victim(client, org, operator):
    """What the acme host's key did and saw, through the API only."""
    writes.publish(org.acme, "allergy-policy", "ask before naming drugs", principal=operator)
    acme = bearer(org.acme_secret)
    learned = Learned()

    def call(method, path, data=None):
        if method == "get":
            response = client.get(path, data or {}, headers=acme)
        else:
            response = getattr(client, method)(
                path, data, content_type="application/json", headers=acme
            )
        assert response.status_code < 300, (path, response.content)
        learned.take(response.json())
        return response

    call("put", "/api/v1/actors/v1", {"display_name": "Victim", "scopes": ["team:acme/ops"]})
    call(
        "post",
        "/api/v1/threads/thr-secret/messages",
        {"actor": "v1", "role": "user", "text": "my allergy results", "run_id": "run-secret"},
    )
    for fact in SECRET_TEXTS[:2]:
        call(
            "post",
            "/api/v1/memories",
            {
                "actor": "v1",
                "key": "allergy",
                "fact": fact,
                "run_id": "run-secret",
                "tool_call_id": f"call-{len(learned.memory_ids)}",
                "thread_id": "thr-secret",
            },
        )
    call("post", "/api/v1/turns", {"actor": "v1", "run_id": "run-2", "thread_id": "thr-secret"})
    call("get", "/api/v1/memories", {"actor": "v1"})
    call("get", "/api/v1/memories/search", {"actor": "v1", "q": "allergy"})
    call("get", "/api/v1/actors/u1")
    call("get", "/api/v1/actors/u2")
    # Everything the prober will replay came out of those responses.
    assert len(learned.memory_ids) >= 3  # two versions (one superseded) and the policy
    assert {"v1", "u1", "u2"} <= learned.actors
    assert {"run-secret", "run-2"} <= learned.runs
    assert "thr-secret" in learned.threads
    assert learned.tool_calls
    return learned


def probes(learned, own_actor: str):
    """(name, method, path, data) for every endpoint, with every learned id."""
    out = []
    runs, threads = sorted(learned.runs), sorted(learned.threads)
    # Names are per tenant: to the prober's key a bare `v1` is its own tenant's v1 (another
    # person), so the victim's actors are probed by their qualified names.
    for ref in sorted({r if "/" in r else f"acme/{r}" for r in learned.actors}):
        out += [
            ("actor.get", "get", f"/api/v1/actors/{ref}", None),
            ("actor.put", "put", f"/api/v1/actors/{ref}", {"scopes": ["tenant:globex"]}),
            ("read_back", "get", "/api/v1/memories", {"actor": ref}),
            ("search", "get", "/api/v1/memories/search", {"actor": ref, "q": "allergy"}),
        ]
        for thread in threads:
            out += [
                (
                    "read_back.thread",
                    "get",
                    "/api/v1/memories",
                    {"actor": ref, "thread_id": thread},
                ),
                (
                    "message",
                    "post",
                    f"/api/v1/threads/{thread}/messages",
                    {"actor": ref, "role": "user", "text": "hello", "run_id": runs[0]},
                ),
            ]
        for run in runs:
            out.append(
                (
                    "turn",
                    "post",
                    "/api/v1/turns",
                    {"actor": ref, "run_id": run, "thread_id": threads[0]},
                )
            )
            for call in sorted(learned.tool_calls):
                out.append(
                    (
                        "remember",
                        "post",
                        "/api/v1/memories",
                        {
                            "actor": ref,
                            "key": "allergy",
                            "fact": "overwritten",
                            "run_id": run,
                            "tool_call_id": call,
                            "thread_id": threads[0],
                        },
                    )
                )
    # Memory ids: with each learned actor, and with the prober's own actor.
    for memory_id in sorted(learned.memory_ids):
        for ref in [*sorted({r if "/" in r else f"acme/{r}" for r in learned.actors}), own_actor]:
            out += [
                ("memory.get", "get", f"/api/v1/memories/{memory_id}", {"actor": ref}),
                ("forget", "delete", f"/api/v1/memories/{memory_id}?actor={ref}", None),
            ]
    return out


def test_another_tenants_key_gets_404_for_every_learned_id_and_every_probe_is_logged(
    client, org, victim
):
    prober = org.globex_key.principal
    foreign = bearer(org.globex_secret)
    before = stored()
    memberships = {
        a.ref: list(a.memberships.values_list("scope__token", flat=True))
        for a in Actor.objects.filter(ref__in=victim.actors)
    }
    all_probes = probes(victim, own_actor="x9")
    assert {name for name, *_ in all_probes} == {
        "actor.get",
        "actor.put",
        "read_back",
        "read_back.thread",
        "search",
        "message",
        "turn",
        "remember",
        "memory.get",
        "forget",
    }
    for name, method, path, data in all_probes:
        logged = AccessLog.objects.filter(principal=prober, outcome=404).count()
        if method in {"get", "delete"}:
            response = getattr(client, method)(path, data or {}, headers=foreign)
        else:
            response = getattr(client, method)(
                path, data, content_type="application/json", headers=foreign
            )
        where = (name, path, data)
        assert response.status_code == 404, (*where, response.content[:200])
        body = response.json()
        assert set(body) == {"detail"}, where
        assert body["detail"] in {"memory not found"} or body["detail"].startswith("actor "), where
        for text in SECRET_TEXTS:
            assert text not in body["detail"], where
        assert not MEMORY_ID.search(body["detail"]), where
        rows = AccessLog.objects.filter(principal=prober, outcome=404)
        assert rows.count() == logged + 1, where
        row = rows.order_by("-id").first()
        assert row.channel == "api"
    # Nothing was written, moved or erased by the prober.
    assert stored() == before
    assert set(Memory.objects.filter(uid__in=victim.memory_ids).values_list("uid", flat=True)) == (
        victim.memory_ids
    )
    assert memberships == {
        a.ref: list(a.memberships.values_list("scope__token", flat=True))
        for a in Actor.objects.filter(ref__in=victim.actors)
    }
    assert not Message.objects.filter(text="hello").exists()
    assert not Memory.objects.filter(text="overwritten").exists()
    assert all(KEY_RE.fullmatch(m.key) for m in Memory.objects.all())


def test_learned_run_and_thread_ids_name_nothing_of_the_victim_under_the_probers_own_actor(
    client, org, victim
):
    """Run and thread ids are the host's own, per actor: replayed under the prober's own
    actor they name a new, empty run or thread of that actor, and reveal nothing."""
    foreign = bearer(org.globex_secret)
    for run in sorted(victim.runs):
        turn = client.post(
            "/api/v1/turns",
            {"actor": "x9", "run_id": run, "thread_id": sorted(victim.threads)[0]},
            content_type="application/json",
            headers=foreign,
        )
        assert turn.status_code == 200
        assert not (victim.memory_ids & set(MEMORY_ID.findall(turn.content.decode())))
        assert Digest.objects.get(actor=org.x9, run_id=run).actor_id == org.x9.id
    for thread in sorted(victim.threads):
        page = client.get("/api/v1/memories", {"actor": "x9", "thread_id": thread}, headers=foreign)
        assert page.status_code == 200
        assert page.json() == {"items": [], "count": 0}
    for response in (turn, page):
        for text in SECRET_TEXTS:
            assert text not in response.content.decode()
