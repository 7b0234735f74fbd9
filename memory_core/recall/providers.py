"""Embedders: what turns a memory, or a query, into a vector for semantic recall.

One small interface (an identity, a width, `embed` of a batch) and three choices, picked by
settings.MEMORY_EMBEDDER (README, "Semantic recall"):

- `wordllama` (the default): static word embeddings whose weights ship inside the
  `wordllama` wheel and are loaded from the package's own directory, never downloaded.
  Embedding is a token lookup and an average: tens of microseconds per short text.
- `http`: any server that speaks OpenAI's `POST /v1/embeddings` (Ollama, vLLM, TEI,
  llama.cpp's server, OpenAI), with a timeout and bounded retries.
- `none`: lexical search only, as before semantic recall.

The rest of this module is pure: what text is embedded for a memory, and whether a vector
an embedder returned may be stored (right width, finite, not zero).
"""

import json
import math
import os
import re
import time
import urllib.error
import urllib.request
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import cache

import numpy

from memory_core.recall.stopwords import content_words


class EmbedderError(Exception):
    """The embedder did not give a usable vector for every text: down, slow, or wrong."""


# Words too common to say what a text is about. A static embedding is an average of its
# words' vectors, so "who is their boss?" is mostly "who is their"; without them it is
# "boss". Measured on tests/recall: recall@3 of paraphrased questions 29 → 34 of 40.
STOPWORDS = frozenset(
    """a about above after again all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is
    it its itself just me more most my myself no nor not of off on once only or other our
    ours ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we
    were what when where which while who whom why will with would you your yours yourself
    yourselves""".split()
)
_WORD = re.compile(r"[\w'’-]+")


def without_stopwords(text: str) -> str:
    """The text's words less the stop words; the text itself if that leaves nothing."""
    words = [w for w in _WORD.findall(text) if w.lower() not in STOPWORDS]
    return " ".join(words) if words else text


def content_text(text: str) -> str:
    """The text's words less the stop words of English, Portuguese, Spanish and German
    (recall/stopwords.py); the text itself if that leaves nothing."""
    words = content_words(_WORD.findall(text))
    return " ".join(words) if words else text


def key_words(key: str) -> str:
    """A key as words: `favorite_food` → `favorite food`."""
    return re.sub(r"[._-]+", " ", key)


def document_text(key: str, text: str, key_weight: int = 1) -> str:
    """What is embedded for a memory: its key in words (`key_weight` times), then its fact."""
    return f"{' '.join([key_words(key)] * key_weight)}: {text}"


def vector_problem(vector, dims: int) -> str | None:
    """Why a vector may not be stored or compared (None when it may)."""
    if not isinstance(vector, list | tuple):
        return "not a list of numbers"
    if len(vector) != dims:
        return f"{len(vector)} dimensions where {dims} were expected"
    norm = 0.0
    for x in vector:
        if isinstance(x, bool) or not isinstance(x, int | float):
            return "not a list of numbers"
        if not math.isfinite(x):
            return "a component is NaN or infinite"
        norm += x * x
    if norm == 0.0:
        return "the zero vector has no direction"
    return None


class Embedder(ABC):
    name: str
    version: str
    dims: int
    # The cosine similarity from which a memory is taken as related to a query on meaning
    # alone (search.py): what bounds the answers to a question nothing on file answers.
    min_similarity: float
    # The cosine similarity between two memories' vectors from which they are taken to hold
    # (nearly) the same fact (remember's `similar`, step 4 of memory_core_remember in writes.sql).
    same_fact_similarity: float

    @property
    def identity(self) -> str:
        """What is stored beside each vector; vectors of other identities are never compared
        with this embedder's."""
        return f"{self.name}@{self.version}"

    @abstractmethod
    def embed(self, texts: list[str]):
        """One vector per text: a list of lists of numbers, or a 2-D numpy array."""

    def document(self, key: str, text: str) -> str:
        """The text embedded for a memory with this key and fact."""
        return document_text(key, text)

    def query(self, text: str) -> str:
        """The text embedded for a search or a turn's query. Not stored, so changing it needs
        no re-embedding."""
        return text

    def warm(self) -> None:  # noqa: B027 (optional: most embedders have nothing to load)
        """Load what the first call would load (before gunicorn forks its workers)."""


class WordLlama(Embedder):
    name = "wordllama:l2_supercat_256"
    dims = 256
    # Calibrated on the DEV half of tests/recall/generalise (docs/agents/recall.md): 0.2
    # dropped right answers that scored 0.1 to 0.19, while off-topic questions' best matches
    # score 0.1 to 0.44, so no floor separates the two. At 0.15 fused search finds 98 of 168
    # at @5 (0.2: 87) for 74 off-topic results of 140 (0.2: 44; no floor: 137). With the
    # chains grown to ~310 rows by everyday notes it still trades the same way on DEV (fused
    # @5 / off-topic results: 0.15 75 / 107, 0.18 73 / 88, 0.2 70 / 72, 0.22 67 / 58).
    min_similarity = 0.15
    # Calibrated on rewordings of facts under another key against every pair of two
    # different facts of one person (writes.SAME_FACT_TRIGRAM says on what).
    same_fact_similarity = 0.6

    def __init__(self):
        import wordllama

        # "+mc1": what this class feeds the model (the stop-word list, the key's weight) is
        # part of what makes the vector. Change either, and bump it.
        self.version = f"{wordllama.__version__}+mc1"
        self._model = None

    def document(self, key: str, text: str) -> str:
        # The key says what the fact is about, and a static embedding is an average of its
        # words: said twice, it weighs as much as a short fact. Measured on tests/recall at
        # the similarity floor 0.2: paraphrased recall@3 34 → 36 of 40.
        return document_text(key, text, key_weight=2)

    def query(self, text: str) -> str:
        # A question is mostly function words, and those of Portuguese, Spanish and German
        # are not in STOPWORDS: "Wie lange ist sie schon in der Ehe?" is embedded as
        # "lange schon Ehe". Only the query: a stored vector's text is embedded as before
        # (dropping them from memories too lost recall). Measured on the DEV half of
        # tests/recall/generalise, nearest keys @5: 87 → 94 of 168 (docs/agents/recall.md).
        return content_text(text)

    def _loaded(self):
        if self._model is None:
            import wordllama

            # The wheel carries the weights (weights/l2_supercat_256.safetensors) and the
            # tokenizer's configuration; pointed at its own directory with downloads off, the
            # loader reads only those files.
            self._model = wordllama.WordLlama.load(
                config="l2_supercat",
                dim=self.dims,
                cache_dir=os.path.dirname(wordllama.__file__),
                disable_download=True,
            )
        return self._model

    def warm(self) -> None:
        self._loaded()

    def embed(self, texts: list[str]) -> numpy.ndarray:
        prepared = [without_stopwords(t) for t in texts]
        model = self._loaded()
        if len(prepared) == 1:  # a query, or one remember: most calls, one per API call
            return self._one(model, prepared[0])
        return model.embed(prepared, norm=True, batch_size=256)

    @staticmethod
    def _one(model, text: str):
        """wordllama's `embed([text], norm=True)`, the same float32 values (a test holds them
        bit for bit), without the batch's padding, masks and copies: 0.2 ms less per call
        (0.42 → 0.22 ms, with the caches as an API call finds them, after a statement)."""
        table = model.embedding
        ids = model.tokenizer.encode(text, add_special_tokens=False).ids
        if ids and max(ids) >= len(table):  # as wordllama clamps them
            ids = [min(i, len(table) - 1) for i in ids]
        mean = table[ids].sum(axis=0, dtype=numpy.float32) / numpy.float32(max(len(ids), 1))
        return (mean / numpy.sqrt(numpy.add.reduce(mean * mean)))[numpy.newaxis]


class Http(Embedder):
    """An OpenAI-compatible embeddings endpoint: POST {url}/embeddings."""

    min_similarity = 0.3
    # Not calibrated: sentence-embedding models score paraphrases high; a stricter start.
    same_fact_similarity = 0.85

    def __init__(self, url, model, dims, version, key="", timeout=2.0, retries=1):
        self.url = url.rstrip("/") + "/embeddings"
        self.model, self.dims, self.version = model, dims, version
        self.name = f"http:{model}"
        self.key, self.timeout, self.retries = key, timeout, retries

    def embed(self, texts: list[str]) -> list[list[float]]:
        body = json.dumps({"model": self.model, "input": texts}).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        last = None
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(min(0.05 * 2**attempt, 0.5))
            request = urllib.request.Request(self.url, data=body, headers=headers)
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    return _vectors(json.loads(response.read()), len(texts))
            except urllib.error.HTTPError as error:
                last = error
                if error.code < 500 and error.code != 429:
                    break  # the request is wrong; sending it again will not help
            except (OSError, ValueError) as error:  # refused, timed out, not JSON
                last = error
        raise EmbedderError(f"{self.url}: {last}")


def _vectors(payload, count: int) -> list[list[float]]:
    """The `data` of an embeddings response, in input order."""
    try:
        data = sorted(payload["data"], key=lambda item: item["index"])
        vectors = [item["embedding"] for item in data]
    except (KeyError, TypeError) as error:
        raise EmbedderError(f"not an embeddings response ({error!r})") from None
    if len(vectors) != count:
        raise EmbedderError(f"{len(vectors)} vectors for {count} texts")
    return vectors


@cache
def current() -> Embedder | None:
    """The configured embedder (one per process), or None for `none`."""
    from django.conf import settings

    choice = settings.MEMORY_EMBEDDER
    if choice == "none":
        return None
    if choice == "http":
        embedder = Http(
            settings.MEMORY_EMBEDDER_URL,
            settings.MEMORY_EMBEDDER_MODEL,
            settings.MEMORY_EMBEDDER_DIMS,
            settings.MEMORY_EMBEDDER_VERSION,
            key=settings.MEMORY_EMBEDDER_KEY,
            timeout=settings.MEMORY_EMBEDDER_TIMEOUT,
            retries=settings.MEMORY_EMBEDDER_RETRIES,
        )
    else:
        embedder = _wordllama()
    # The setting, or the embedder's own floor (the wordllama instance is shared across
    # settings changes, so an earlier override must not stay behind).
    floor = settings.MEMORY_EMBEDDER_MIN_SIMILARITY
    embedder.min_similarity = type(embedder).min_similarity if floor is None else floor
    return embedder


@cache
def _wordllama() -> WordLlama:
    """One loaded model per process, whatever settings the tests switch between."""
    return WordLlama()


@dataclass
class _Health:
    """After a failure the embedder is left alone for MEMORY_EMBEDDER_COOLDOWN seconds, so
    that a down embedder costs each write nothing rather than a timeout."""

    down_until: float = 0.0


_health = _Health()


def reset() -> None:
    """Forget the configured embedder and its failures (settings changed)."""
    current.cache_clear()
    _health.down_until = 0.0


def embed_documents(pairs) -> tuple[Embedder, list] | None:
    """embed() of memories given as (key, text) pairs, each as its embedder frames one."""
    embedder = current()
    if embedder is None:
        return None
    return embed([embedder.document(key, text) for key, text in pairs])


def embed_query(text: str) -> tuple[Embedder, list] | None:
    """embed() of a search's or a turn's query, as its embedder frames one."""
    embedder = current()
    if embedder is None:
        return None
    return embed([embedder.query(text)])


def embed(texts: list[str]) -> tuple[Embedder, list] | None:
    """Vectors for `texts` from the configured embedder, each checked; None when there is no
    embedder, it is cooling down after a failure, or it fails now (then it cools down)."""
    from django.conf import settings

    embedder = current()
    if embedder is None or time.monotonic() < _health.down_until:
        return None
    try:
        vectors = _checked(embedder, embedder.embed(list(texts)), len(texts))
    except Exception as error:  # an embedder failing must never fail the write
        import logging

        logging.getLogger("memory_core.recall.providers").warning("embedder unavailable: %s", error)
        _health.down_until = time.monotonic() + settings.MEMORY_EMBEDDER_COOLDOWN
        return None
    return embedder, vectors


def _checked(embedder: Embedder, vectors, count: int) -> list:
    """The embedder's vectors, each checked. A 2-D array of floats (wordllama's) is checked
    as a whole, which is much faster, and its rows are returned as they are (a Vector sends
    one without a list of Python floats between); other answers as lists of floats, each
    checked by vector_problem."""
    if isinstance(vectors, numpy.ndarray):
        if vectors.shape != (count, embedder.dims) or vectors.dtype.kind != "f":
            raise EmbedderError(f"{embedder.identity} returned an array of {vectors.shape}")
        if not numpy.isfinite(vectors).all():
            raise EmbedderError(f"{embedder.identity} returned a bad vector: NaN or infinite")
        if not numpy.any(vectors, axis=1).all():
            raise EmbedderError(f"{embedder.identity} returned a bad vector: the zero vector")
        return list(vectors)
    if len(vectors) != count:
        raise EmbedderError(f"{len(vectors)} vectors for {count} texts")
    for vector in vectors:
        problem = vector_problem(vector, embedder.dims)
        if problem:
            raise EmbedderError(f"{embedder.identity} returned a bad vector: {problem}")
    return [[float(x) for x in vector] for vector in vectors]
