"""The test double of an OpenAI-compatible chat model for the capture extractor: the
scripted model of memory_console/loadgen/chat_model.py (real HTTP, threaded), answering as
`mode` says, as real models and real servers misbehave.

Modes:
- ok: the `script` (a list of items, or a function of the request body to items) as
  {"memories": items}; without a script, one memory per user message (chat_model.noted);
- slow: as ok, after `delay` seconds;
- down: 503 (a server that is overloaded or starting);
- refused: 401 (a wrong key);
- garbage: a body that is not JSON;
- not_completion: JSON without choices;
- prose: a completion whose content is prose, not JSON;
- fenced: the JSON wrapped in a Markdown code fence;
- wrong_shape: {"facts": [...]} instead of {"memories": [...]};
- hostile: items that try to pick a scope, an author or another actor, secrets, bad keys,
  multi-line facts, and 500 items in all.
"""

import json
import time

from memory_console.loadgen.chat_model import ChatModel, completion, memories, noted

MODES = (
    "ok",
    "slow",
    "down",
    "refused",
    "garbage",
    "not_completion",
    "prose",
    "fenced",
    "wrong_shape",
    "hostile",
)


def hostile_items(count: int = 500) -> list:
    """What a model answering a hostile conversation might list: the first items try every
    way to write beyond the actor's own scope, the rest are 500 well-formed facts."""
    tries = [
        {"key": "policy", "fact": "everyone gets admin", "scope": "global"},
        {"key": "policy", "fact": "all users are admins", "actor": "acme/u2"},
        {"key": "owner", "fact": "written by a person", "author": "human"},
        {"key": "Global:Policy", "fact": "bad key"},
        {"key": "two-lines", "fact": "first line\nsecond line"},
        {"key": "token", "fact": "their API key is sk-abcdefghijklmnopqrstuvwx"},
        {"key": "", "fact": "empty key"},
        "remember at global: the fiscal year starts in April",
        {"key": "nested", "fact": {"text": "not a string"}},
    ]
    items = list(tries)
    items += [{"key": f"item-{n}", "fact": f"fact number {n}"} for n in range(count - len(tries))]
    return items


class ChatServer(ChatModel):
    def __init__(self, mode: str = "ok", script=None, delay: float = 1.0):
        assert mode in MODES, mode
        self.mode, self.script, self.delay = mode, script, delay
        super().__init__(answer=self.scripted)

    def items(self, body: dict):
        if callable(self.script):
            return self.script(body)
        return self.script

    def scripted(self, body: dict):
        mode = self.mode
        if mode == "down":
            return 503, {"error": "overloaded"}
        if mode == "refused":
            return 401, {"error": "invalid api key"}
        if mode == "garbage":
            return 200, b"<html>not json</html>"
        if mode == "not_completion":
            return 200, {"object": "error", "message": "no choices here"}
        if mode == "prose":
            return 200, completion("Sure! The person likes tea and lives in Lisbon.")
        if mode == "hostile":
            return 200, memories(hostile_items())
        if mode == "slow":
            time.sleep(self.delay)
        items = self.items(body)
        if items is None:
            return noted(body)
        if mode == "fenced":
            return 200, completion("```json\n" + json.dumps({"memories": items}) + "\n```")
        if mode == "wrong_shape":
            return 200, completion(json.dumps({"facts": items}))
        return 200, memories(items)

    def settings(self, **extra) -> dict:
        """override_settings arguments that point the http extractor here."""
        return {
            "MEMORY_EXTRACTOR": "http",
            "MEMORY_EXTRACTOR_URL": self.url,
            "MEMORY_EXTRACTOR_MODEL": "fake-chat",
            "MEMORY_EXTRACTOR_KEY": "sk-test-extractor",
            "MEMORY_EXTRACTOR_TIMEOUT": 0.5,
            "MEMORY_EXTRACTOR_RETRIES": 1,
            "MEMORY_EXTRACTOR_COOLDOWN": 0,
            **extra,
        }
