"""Python quickstart: one agent turn for the user u1."""

import os

from memory_console_client import Client, NotFound

with Client(os.environ["MEMORY_CONSOLE_URL"], os.environ["MEMORY_CONSOLE_KEY"]) as memory:
    # At the start of the turn: what is on file about u1, ready for the system prompt.
    turn = memory.turn("u1", "run-1", query="meetings")
    print(turn.block)

    # During the turn the agent learns something durable about u1. The same run_id and
    # tool_call_id again (a retry) return the stored record instead of writing twice.
    note = memory.remember(
        "u1", "meeting-hours", "prefers meetings before noon", run_id="run-1", tool_call_id="call-1"
    )
    print(f"remembered {note.key} at {note.scope} ({note.id})")

    # Everything that applies to u1, and a search of it.
    for item in memory.list_memories("u1").items:
        print(f"{item.scope:>16}  {item.key}: {item.text}")
    print([m.key for m in memory.search("u1", "noon").items])

    # u1 asks to be forgotten: every version of the note is erased.
    memory.forget(note.id, "u1")
    try:
        memory.get_memory(note.id, "u1")
    except NotFound as error:
        print(error.status, error.detail)
