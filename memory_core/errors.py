"""Domain refusals. Delivery layers map each to a status once (API: exception handler)."""


class DomainError(Exception):
    status = 400
    reason = "refused"

    def __init__(self, message: str, *, reason: str | None = None):
        super().__init__(message)
        self.message = message
        if reason is not None:
            self.reason = reason


class Invalid(DomainError):
    """Malformed input: nothing was changed (422)."""

    status = 422
    reason = "invalid"


class Forbidden(DomainError):
    """Visible, but beyond what this principal may do (403)."""

    status = 403
    reason = "forbidden"


class NotFound(DomainError):
    """Absent, or invisible to this principal: the two must be indistinguishable (404)."""

    status = 404
    reason = "not_found"


class Gone(DomainError):
    """The actor a write names was erased: nothing is written until a superuser reopens the
    ref (410). Reads of what is left (nothing) still answer as before."""

    status = 410
    reason = "gone"


class Conflict(DomainError):
    """The request cannot be served in the server's present configuration (409): e.g. an
    extraction asked of a server with no extractor."""

    status = 409
    reason = "conflict"


class Unavailable(DomainError):
    """Something the request needs beyond the database (the extractor's model) cannot be
    used now: nothing was changed; try again after `retry_after` seconds (503)."""

    status = 503
    reason = "unavailable"

    def __init__(self, message: str, *, retry_after: int, reason: str | None = None):
        super().__init__(message, reason=reason)
        self.retry_after = max(1, int(retry_after))
