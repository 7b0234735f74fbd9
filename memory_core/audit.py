"""The access log: every read, write and refused attempt, with ids and counts only."""

from contextlib import contextmanager

from memory_core.errors import DomainError
from memory_core.models import AccessLog


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
) -> AccessLog:
    return AccessLog.objects.create(
        channel=principal.channel,
        principal=principal.name,
        actor_ref=actor_ref,
        action=action,
        outcome=outcome,
        scope=scope,
        memory_ids=list(memory_ids),
        count=count,
        detail=detail or {},
    )


@contextmanager
def refusals_logged(principal, action: str, *, actor_ref: str | None = None, scope=None):
    """Log a DomainError raised inside as a refused attempt, then let it propagate.

    Use it outside the service's transaction: the refusal row must survive the rollback.
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
