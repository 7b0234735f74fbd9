"""A scripted OpenAI-compatible chat model over real HTTP: `POST {url}/chat/completions`.

The stand-in for Ollama, vLLM, llama.cpp's server or OpenAI behind the capture extractor
(memory_core/capture/), for the bench (a model that answers at once, so the measure is the
server's own cost) and the tests (tests/chat_server.py scripts it to be slow, down, wrong or
hostile). Real HTTP on a free loopback port, every request recorded: loadgen/scripted.py.

`answer(body)` returns (status, payload): a dict is sent as JSON, bytes as they are. The
default is `noted`: one memory per user message of the request, keyed by the message's
first word, its fact the message's first line (clipped), so the same conversation always
gives the same memories.
"""

import json
import re

from memory_console.loadgen.scripted import ScriptedServer

_MESSAGE = re.compile(r"^\[user\] (.+)$", re.MULTILINE)
_WORD = re.compile(r"[a-z0-9]+")


def completion(content: str, model: str = "scripted") -> dict:
    """A chat completion whose first choice says `content`."""
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
    }


def memories(items) -> dict:
    """A chat completion whose content is {"memories": items}."""
    return completion(json.dumps({"memories": list(items)}))


def user_messages(body: dict) -> list[str]:
    """The user messages the extractor's request carried (its prompt's `[user] …` lines)."""
    prompt = body["messages"][-1]["content"]
    return _MESSAGE.findall(prompt.split("New messages:", 1)[-1])


def noted(body: dict) -> tuple[int, dict]:
    items = []
    for text in user_messages(body):
        words = _WORD.findall(text.lower())
        key = f"note-{words[0]}" if words else "note"
        items.append({"key": key[:64], "fact": text.strip()[:200] or "said nothing"})
    return 200, memories(items)


class ChatModel(ScriptedServer):
    protocol_version = "HTTP/1.1"

    def __init__(self, answer=noted):
        self.answer = answer
        super().__init__()

    def respond(self, path: str, body) -> tuple[int, dict | bytes]:
        if not path.endswith("/chat/completions") or body is None:
            return 404, {"error": "not found"}
        return self.answer(body)

    def env(self, **extra) -> dict:
        """Environment variables that point the extractor here (for a subprocess)."""
        return {
            "MEMORY_EXTRACTOR": "http",
            "MEMORY_EXTRACTOR_URL": self.url,
            "MEMORY_EXTRACTOR_MODEL": "scripted",
            **{name: str(value) for name, value in extra.items()},
        }
