"""A real HTTP server, in a thread, speaking OpenAI's POST /v1/embeddings: the test double of
an Ollama, vLLM, TEI or OpenAI endpoint for the `http` embedder.

Its vectors are word hashes (each word adds 1 to one of `dims` buckets), so two texts
sharing words are similar and others are not; `mode` makes it misbehave the ways real
embedders do. Every request is recorded (path, headers, body): loadgen/scripted.py.
"""

import hashlib
import re
import time

from memory_console.loadgen.scripted import ScriptedServer

MODES = ("ok", "down", "bad_request", "slow", "wrong_dims", "nan", "zero", "garbage", "same")


def word_vector(text: str, dims: int) -> list[float]:
    vector = [0.0] * dims
    for word in re.findall(r"\w+", text.lower()):
        vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % dims] += 1.0
    if not any(vector):
        vector[0] = 1.0
    return vector


class EmbeddingServer(ScriptedServer):
    def __init__(self, dims: int = 8, mode: str = "ok"):
        self.dims, self.mode = dims, mode
        super().__init__()

    def respond(self, path: str, body) -> tuple[int, dict | bytes]:
        if path != "/v1/embeddings" or body is None:
            return 404, {"error": "not found"}
        mode, dims, texts = self.mode, self.dims, body["input"]
        if mode == "down":
            return 503, {"error": "overloaded"}
        if mode == "bad_request":
            return 400, {"error": "unknown model"}
        if mode == "garbage":
            return 200, b"<html>not json</html>"
        if mode == "slow":
            time.sleep(1.0)
        vectors = [word_vector(t, dims) for t in texts]
        if mode == "wrong_dims":
            vectors = [v + [1.0] for v in vectors]
        elif mode == "nan":
            vectors = [[float("nan")] * dims for _ in texts]
        elif mode == "zero":
            vectors = [[0.0] * dims for _ in texts]
        elif mode == "same":  # every text the same direction: everything "matches"
            vectors = [[1.0] + [0.0] * (dims - 1) for _ in texts]
        data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
        # Out of order on purpose: clients must sort by index.
        return 200, {"object": "list", "data": data[::-1], "model": body["model"]}

    def settings(self, **extra) -> dict:
        """override_settings arguments that point the http embedder here."""
        return {
            "MEMORY_EMBEDDER": "http",
            "MEMORY_EMBEDDER_URL": self.url,
            "MEMORY_EMBEDDER_MODEL": "fake-embed",
            "MEMORY_EMBEDDER_DIMS": self.dims,
            "MEMORY_EMBEDDER_KEY": "sk-test",
            "MEMORY_EMBEDDER_TIMEOUT": 0.3,
            "MEMORY_EMBEDDER_RETRIES": 1,
            "MEMORY_EMBEDDER_COOLDOWN": 0,
            "MEMORY_EMBEDDER_MIN_SIMILARITY": 0.3,
            **extra,
        }
