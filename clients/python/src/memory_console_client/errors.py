"""What the client raises: one class per kind of refusal, all of them MemoryConsoleError.

The server answers every error as `{"detail": ...}`; `.detail` is that text (or, for an
answer that is not the API's JSON, the body as text) and `.status` the HTTP status.
"""

from __future__ import annotations

from typing import Any


class MemoryConsoleError(Exception):
    """An error answer from the server, or no answer at all (`ConnectionFailed`)."""

    def __init__(self, status: int | None, detail: Any) -> None:
        self.status = status
        self.detail = detail
        super().__init__(f"{status}: {detail}" if status is not None else str(detail))


class Unauthorized(MemoryConsoleError):
    """401: no key, or a key that is unknown, revoked, paused or expired."""


class Forbidden(MemoryConsoleError):
    """403: visible but not the key's to change (a memory held at a wider scope)."""


class NotFound(MemoryConsoleError):
    """404: unknown, or outside the key's reach (the two look the same on purpose)."""


class Gone(MemoryConsoleError):
    """410: the actor was erased; nothing is written for it."""


class ValidationError(MemoryConsoleError):
    """422: the request broke a rule; the detail names it (and the limit)."""


class RateLimited(MemoryConsoleError):
    """429: too many requests."""


class ServerError(MemoryConsoleError):
    """5xx: the server failed, or could not reach its database (503)."""


class ConnectionFailed(MemoryConsoleError):
    """No answer: the connection failed or timed out (`status` is None)."""


_BY_STATUS: dict[int, type[MemoryConsoleError]] = {
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    410: Gone,
    422: ValidationError,
    429: RateLimited,
}


def error_for(status: int, detail: Any) -> MemoryConsoleError:
    """The exception for an error answer with this status."""
    if status >= 500:
        return ServerError(status, detail)
    return _BY_STATUS.get(status, MemoryConsoleError)(status, detail)
