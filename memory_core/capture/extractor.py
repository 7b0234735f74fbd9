"""The extractor: an OpenAI-compatible chat model reached over HTTP (Ollama, vLLM,
llama.cpp's server, OpenAI), picked by settings.MEMORY_EXTRACTOR (`none` or `http`).

It follows the embedder's pattern (memory_core/recall/providers.py): a timeout, bounded
retries of what a retry can help (refused connections, timeouts, 5xx, 429), and after a
failure a cool-down of MEMORY_EXTRACTOR_COOLDOWN seconds during which nothing is sent and
every extraction fails at once (the API answers 503 with Retry-After), so that a model that
is down costs a request nothing rather than a timeout.

What it is asked and how its answer is read are rules (memory_core/rules/capture.py); this
module only carries the request and hands back the parsed response body.
"""

import json
import logging
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from functools import cache

from django.conf import settings

logger = logging.getLogger(__name__)

# A chat completion holding MEMORY_EXTRACT_MAX items is a few kilobytes; a body past this
# is not read further (a hostile or broken server could send anything).
MAX_RESPONSE_BYTES = 1024 * 1024

UNREACHABLE = "unreachable"  # refused, timed out, 5xx, 429
REFUSED = "refused"  # a 4xx other than 429: the request (key, model name) is wrong
MALFORMED = "malformed"  # an answer that is not {"memories": [...]}


class ExtractorError(Exception):
    """The model could not be used: `reason` is one of UNREACHABLE, REFUSED, MALFORMED."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class Http:
    url: str
    model: str
    key: str = ""
    timeout: float = 60.0
    retries: int = 1

    @property
    def endpoint(self) -> str:
        return self.url.rstrip("/") + "/chat/completions"

    def complete(self, body: dict) -> object:
        """POST the body to {url}/chat/completions; the parsed JSON of the answer."""
        data = json.dumps(body).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        last: Exception | None = None
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(min(0.1 * 2**attempt, 1.0))
            request = urllib.request.Request(self.endpoint, data=data, headers=headers)
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    raw = response.read(MAX_RESPONSE_BYTES + 1)
            except urllib.error.HTTPError as error:
                last = error
                if error.code < 500 and error.code != 429:
                    raise ExtractorError(REFUSED, f"{self.endpoint}: HTTP {error.code}") from None
                continue
            except OSError as error:  # refused, reset, timed out
                last = error
                continue
            if len(raw) > MAX_RESPONSE_BYTES:
                raise ExtractorError(MALFORMED, "the answer is larger than 1 MiB")
            try:
                return json.loads(raw)
            except (ValueError, RecursionError):
                raise ExtractorError(MALFORMED, "the answer is not JSON") from None
        raise ExtractorError(UNREACHABLE, f"{self.endpoint}: {last}")


def enabled() -> bool:
    return settings.MEMORY_EXTRACTOR != "none"


@cache
def _configured(url: str, model: str, key: str, timeout: float, retries: int) -> Http:
    return Http(url, model, key=key, timeout=timeout, retries=retries)


def current() -> Http | None:
    """The configured extractor, or None when extraction is off."""
    if not enabled():
        return None
    return _configured(
        settings.MEMORY_EXTRACTOR_URL,
        settings.MEMORY_EXTRACTOR_MODEL,
        settings.MEMORY_EXTRACTOR_KEY or "",
        settings.MEMORY_EXTRACTOR_TIMEOUT,
        settings.MEMORY_EXTRACTOR_RETRIES,
    )


@dataclass
class _Health:
    down_until: float = 0.0


_health = _Health()


def cooling_down() -> float:
    """Seconds left of the cool-down after a failure (0 when the model may be asked)."""
    return max(0.0, _health.down_until - time.monotonic())


def reset() -> None:
    """Forget past failures (tests; settings changed)."""
    _health.down_until = 0.0


def failed(error: ExtractorError) -> None:
    """A failure to reach the model starts the cool-down. A malformed answer does not: the
    model is there and answered, and the next extraction may well be read."""
    logger.warning("extractor failed (%s): %s", error.reason, error)
    if error.reason != MALFORMED:
        _health.down_until = time.monotonic() + settings.MEMORY_EXTRACTOR_COOLDOWN


def lease_seconds() -> float:
    """How long a worker's claim on a job lasts: the longest one extraction can take (every
    attempt timing out, with the pauses between them) and a margin for the database work."""
    attempts = settings.MEMORY_EXTRACTOR_RETRIES + 1
    return settings.MEMORY_EXTRACTOR_TIMEOUT * attempts + attempts + 5.0
