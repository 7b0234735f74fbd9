"""The short text beside each tool's structured result: what a model reads.

Many MCP clients hand the model only a result's text content, so the text carries what the
model acts on (the prompt block itself, the ids it may cite to get or invalidate a memory), in
a few lines rather than the structured result's JSON. The structured content, with its
output schema, is for the host.
"""


def _line(memory: dict) -> str:
    return f"- [{memory['scope']}] {memory['key']}: {memory['text']} ({memory['id']})"


def turn(body: dict) -> str:
    parts = [body["block"] or "Nothing is on file about this person yet.", ""]
    parts.append(f"run_id: {body['run_id']}")
    if body["entries"]:
        ids = "; ".join(f"{entry['key']} {entry['id']}" for entry in body["entries"])
        parts.append(f"memory ids: {ids}")
    return "\n".join(parts)


def remembered(memory: dict, created: bool) -> str:
    if not created:
        text = f"Already remembered in this run: {memory['key']} ({memory['id']})."
        return text + _similar(memory)
    text = f"Remembered {memory['key']} at {memory['scope']} ({memory['id']})."
    if memory["supersedes"]:
        text += f" It replaces {memory['supersedes']}."
    wider = [override["scope"] for override in memory["overrides"]]
    if wider:
        text += f" It takes precedence over the value at {', '.join(wider)}."
    return text + _similar(memory)


def _similar(memory: dict) -> str:
    """remember's `similar`, said to the model: which keys to correct instead."""
    similar = memory.get("similar") or []
    if not similar:
        return ""
    keys = ", ".join(f"{s['key']} ({s['id']})" for s in similar)
    return (
        f" Nearly the same fact is already remembered under {keys}: keep one key for it "
        f"(remember the fact under that key, and invalidate {memory['id']})."
    )


def found(body: dict) -> str:
    items = body["items"]
    if not items:
        return "No memory matches."
    head = f"{len(items)} found ({body['tier']}):"
    return "\n".join([head, *(_line(item) for item in items)])


def memory(shape: dict) -> str:
    who = "stated by a person" if shape["author"] == "human" else "concluded by an agent"
    pinned = ", pinned" if shape["pinned"] else ""
    return f"{_line(shape)}\n{who}{pinned}, {shape['created_at']}"


def invalidated(body: dict) -> str:
    return (
        f"Invalidated {body['memory_id']} at {body['scope']}: it is no longer in the memory "
        "block from the next turn on. It stays in its history, where a person can reinstate it."
    )


def recorded(message: dict) -> str:
    return f"Recorded message {message['id']} in thread {message['thread_id']}."
