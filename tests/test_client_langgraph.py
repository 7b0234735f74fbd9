"""The LangGraph adapter inside real LangGraph graphs, against a live server.

A StateGraph compiled with `store=MemoryConsoleStore(client)`: its nodes reach the store
through LangGraph's own runtime (`runtime.store`), put, get, search and delete through it,
and put the turn's block into a system prompt with `memory_block`. No model is called: a
node stands in for it and keeps the prompt it would have sent.
"""

import asyncio
import concurrent.futures
from typing import TypedDict

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore, Item, SearchItem

from memory_console_client import AsyncClient, Client, Forbidden
from memory_console_client.langgraph import MemoryConsoleStore, memory_block
from memory_core import writes
from memory_core.models import AccessLog, Memory

# slow: a live server for each test.
pytestmark = pytest.mark.slow


def run(coroutine):
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


class State(TypedDict, total=False):
    user: str
    run_id: str
    question: str
    seen: dict
    system_prompt: str


@pytest.fixture
def policy(transactional_db, org, operator):
    return writes.publish(org.acme, "units", "report distances in kilometres", principal=operator)


@pytest.fixture
def client(live_server, org):
    with Client(live_server.url, org.acme_secret) as client:
        yield client


def graph_over(client, store):
    """learn → recall → respond: the agent notes a fact, reads what applies, and builds the
    prompt its model would get."""

    def learn(state: State, runtime: Runtime) -> dict:
        namespace = ("actors", state["user"])
        runtime.store.put(namespace, "tone", {"fact": "prefers short answers"})
        runtime.store.put(namespace, "tone", {"fact": "prefers bullet points", "run_id": "r1"})
        runtime.store.put(namespace, "pet", {"fact": "has a cat named Miso"})
        return {}

    def recall(state: State, runtime: Runtime) -> dict:
        namespace = ("actors", state["user"])
        store: BaseStore = runtime.store
        return {
            "seen": {
                "tone": store.get(namespace, "tone"),
                "units": store.get(namespace, "units"),
                "missing": store.get(namespace, "no-such-key"),
                "search": store.search(namespace, query="bullet points", limit=5),
                "all": store.search(namespace, limit=10),
                "human": store.search(namespace, filter={"author": "human"}),
            }
        }

    def forget_pet(state: State, runtime: Runtime) -> dict:
        runtime.store.delete(("actors", state["user"]), "pet")
        runtime.store.delete(("actors", state["user"]), "never-there")
        return {}

    def respond(state: State) -> dict:
        block = memory_block(client, state["user"], state["run_id"], state["question"])
        return {"system_prompt": f"You are a helpful assistant.\n\n{block}"}

    graph = StateGraph(State)
    for node in (learn, recall, forget_pet, respond):
        graph.add_node(node.__name__, node)
    graph.add_edge(START, "learn")
    graph.add_edge("learn", "recall")
    graph.add_edge("recall", "forget_pet")
    graph.add_edge("forget_pet", "respond")
    graph.add_edge("respond", END)
    return graph.compile(store=store)


def test_a_graphs_nodes_remember_read_search_forget_and_prompt_through_the_store(
    client, org, policy
):
    graph = graph_over(client, MemoryConsoleStore(client))
    state = graph.invoke({"user": "u1", "run_id": "run-1", "question": "how should I answer?"})

    seen = state["seen"]
    tone = seen["tone"]
    assert isinstance(tone, Item) and tone.namespace == ("actors", "u1") and tone.key == "tone"
    assert {k: tone.value[k] for k in ("fact", "scope", "author")} == {
        "fact": "prefers bullet points",
        "scope": "actor:acme/u1",
        "author": "agent",
    }
    assert tone.value["supersedes"] is not None  # the second put replaced the first
    assert tone.value["origin"]["run_id"] == "r1"
    assert tone.created_at == tone.updated_at and tone.created_at.tzinfo is not None
    # What applies to the person, wherever it is held.
    assert seen["units"].value["scope"] == "tenant:acme"
    assert seen["units"].value["author"] == "human"
    assert seen["missing"] is None

    found = seen["search"]
    assert found and all(isinstance(item, SearchItem) for item in found)
    assert found[0].key == "tone"
    assert [item.score for item in found] == [1.0 / rank for rank in range(1, len(found) + 1)]
    assert sorted(item.key for item in seen["all"]) == ["pet", "tone", "units"]
    assert all(item.score is None for item in seen["all"])
    assert [item.key for item in seen["human"]] == ["units"]

    prompt = state["system_prompt"]
    assert prompt.startswith("You are a helpful assistant.\n\n<memory>")
    assert "- [actor:acme/u1] tone: prefers bullet points" in prompt
    assert "- [tenant:acme] units: report distances in kilometres" in prompt
    assert "Miso" not in prompt  # forgotten before the turn

    # What the server holds: tone's two versions (one live), no pet, the policy untouched.
    assert Memory.objects.filter(scope__token="actor:acme/u1", key="tone").count() == 2
    assert Memory.objects.live().get(scope__token="actor:acme/u1", key="tone").origin_run == "r1"
    assert not Memory.objects.filter(key="pet").exists()
    assert Memory.objects.live().filter(uid=policy.uid).exists()
    rows = AccessLog.objects.filter(channel="api", principal=f"key:{org.acme_key.prefix}")
    assert {("remember", 201), ("search", 200), ("forget", 204), ("turn", 200)} <= {
        (row.action, row.outcome) for row in rows
    }


def test_an_async_graph_runs_on_the_async_client(live_server, org, policy):
    async def main():
        async with AsyncClient(live_server.url, org.acme_secret) as client:

            async def learn(state: State, runtime: Runtime) -> dict:
                await runtime.store.aput(("actors", "u2"), "tone", {"fact": "formal"})
                item = await runtime.store.aget(("actors", "u2"), "tone")
                block = await memory_block(client, "u2", "run-1", None)
                return {"seen": {"tone": item}, "system_prompt": block}

            graph = StateGraph(State)
            graph.add_node("learn", learn)
            graph.add_edge(START, "learn")
            graph.add_edge("learn", END)
            store = MemoryConsoleStore(client)
            state = await graph.compile(store=store).ainvoke({"user": "u2"})
            with pytest.raises(TypeError, match="async calls only"):
                store.get(("actors", "u2"), "tone")
            return state

    state = run(main())
    assert state["seen"]["tone"].value["fact"] == "formal"
    assert "- [actor:acme/u2] tone: formal" in state["system_prompt"]
    assert Memory.objects.live().filter(scope__token="actor:acme/u2", key="tone").exists()


def test_a_sync_clients_store_serves_async_calls_too(client, org):
    store = MemoryConsoleStore(client)

    async def main():
        await store.aput(("actors", "u1"), "tone", {"fact": "formal"})
        return await store.asearch(("actors", "u1"), query="formal")

    [found] = run(main())
    assert (found.key, found.value["fact"], found.score) == ("tone", "formal", 1.0)


@pytest.mark.parametrize(
    "namespace",
    [("actors",), ("users", "u1"), ("actors", "u1", "notes"), ()],
    ids=["no actor", "another root", "deeper", "empty"],
)
def test_another_namespace_shape_is_a_clear_value_error(client, org, namespace):
    store = MemoryConsoleStore(client)
    for call in (
        lambda: store.get(namespace, "tone"),
        lambda: store.put(namespace, "tone", {"fact": "formal"}),
        lambda: store.search(namespace, query="formal"),
        lambda: store.delete(namespace, "tone"),
    ):
        with pytest.raises(ValueError):
            call()
    with pytest.raises(ValueError, match=r"namespaces are \('actors', <actor ref>\)"):
        store.get(("users", "u1"), "tone")
    assert not Memory.objects.filter(key="tone").exists()


def test_a_value_without_a_fact_or_with_other_fields_is_refused(client, org):
    store = MemoryConsoleStore(client)
    for value in ({"text": "formal"}, {"fact": "formal", "scope": "global"}, {"fact": 3}):
        with pytest.raises(ValueError, match="takes {'fact': str}"):
            store.put(("actors", "u1"), "tone", value)
    assert not Memory.objects.filter(key="tone").exists()


def test_deleting_a_key_held_wider_is_forbidden_and_keeps_it(client, org, policy):
    store = MemoryConsoleStore(client)
    with pytest.raises(Forbidden):
        store.delete(("actors", "u1"), "units")
    assert Memory.objects.live().filter(uid=policy.uid).exists()


def test_namespaces_cannot_be_listed(client, org):
    with pytest.raises(NotImplementedError, match="lists no actors"):
        MemoryConsoleStore(client).list_namespaces()
