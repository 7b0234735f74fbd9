"""LangGraph: a graph whose nodes remember through the store and prompt with the block."""

import os
from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from memory_console_client import Client
from memory_console_client.langgraph import MemoryConsoleStore, memory_block

memory = Client(os.environ["MEMORY_CONSOLE_URL"], os.environ["MEMORY_CONSOLE_KEY"])


class State(TypedDict, total=False):
    user: str
    run_id: str
    message: str
    system_prompt: str


def take_note(state: State, runtime: Runtime) -> dict:
    # The store's namespace is ("actors", <user>); put remembers at the user's own scope.
    if "noon" in state["message"]:
        runtime.store.put(
            ("actors", state["user"]), "meeting-hours", {"fact": "prefers meetings before noon"}
        )
    return {}


def respond(state: State) -> dict:
    block = memory_block(memory, state["user"], state["run_id"], state["message"])
    system_prompt = f"You are a helpful assistant.\n\n{block}"
    # Call your model here with system_prompt and state["message"].
    return {"system_prompt": system_prompt}


builder = StateGraph(State)
builder.add_node("take_note", take_note)
builder.add_node("respond", respond)
builder.add_edge(START, "take_note")
builder.add_edge("take_note", "respond")
builder.add_edge("respond", END)
graph = builder.compile(store=MemoryConsoleStore(memory))

state = graph.invoke({"user": "u1", "run_id": "run-1", "message": "Book us before noon, please"})
print(state["system_prompt"])

store = MemoryConsoleStore(memory)
item = store.get(("actors", "u1"), "meeting-hours")
print(item.value["fact"], item.value["scope"])
for found in store.search(("actors", "u1"), query="meetings", limit=3):
    print(found.score, found.key)
