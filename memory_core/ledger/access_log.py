"""The access log: every read, write and refused attempt, with ids and counts only."""

import contextvars
from contextlib import contextmanager

from django.utils import timezone
from psycopg.types.json import Jsonb

from memory_core.db import prepared
from memory_core.errors import DomainError

# The id of the request being served (memory_console/request_ids.py sets it; None in a
# management command): every access-log row written meanwhile carries it.
REQUEST_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_id", default=None)

# Every API call writes one row; a prepared statement, as the turn's own reads.
INSERT_ACCESS = """
    INSERT INTO memory_core_accesslog
        (created_at, channel, principal, actor_ref, action, outcome, scope, memory_ids,
         count, detail, request_id)
    VALUES (%s, %s, %s, %s, %s, %s, %s, %b::varchar[], %s, %s, %s)
"""


def record(
    principal,
    action: str,
    outcome: int,
    *,
    actor_ref: str | None = None,
    scope: str | None = None,
    memory_ids=(),
    count: int = 0,
    detail: dict | None = None,
) -> None:
    # A prepared INSERT rather than AccessLog.objects.create: every API call writes one.
    prepared.execute(
        INSERT_ACCESS,
        [
            timezone.now(),
            principal.channel,
            principal.name,
            actor_ref,
            action,
            outcome,
            scope,
            list(memory_ids),
            count,
            Jsonb(detail or {}),
            REQUEST_ID.get(),
        ],
    )


@contextmanager
def refusals_logged(principal, action: str, *, actor_ref: str | None = None, scope=None):
    """Log a DomainError raised inside as a refused attempt, then let it propagate.

    Use it outside the service's transaction: the refusal row must survive the rollback.
    A state change gets it from changes.audited; reads and look-ups use it directly.
    """
    try:
        yield
    except DomainError as error:
        record(
            principal,
            action,
            error.status,
            actor_ref=actor_ref,
            scope=scope,
            detail={"reason": error.reason},
        )
        raise
