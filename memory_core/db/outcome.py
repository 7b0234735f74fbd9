"""A write whose connection failed after its statements ran: was it committed?

A failure before COMMIT was sent leaves nothing (PostgreSQL rolls the transaction back),
and the API answers 503, "try again". A failure while the COMMIT is under way, the primary
killed as it commits (high availability), leaves the outcome unknown: the commit may
have reached the synchronous standby that is now the primary. An idempotent write may be
retried either way; a message, which has no idempotency key, would be stored twice. So
the service asks: it looks for the row the write made, on fresh connections, until a
primary answers (the failover's promotion takes tens of seconds) or RESOLVE_SECONDS pass.
Found: the write stands and is answered as a success. Absent on the primary: rolled back,
503. No primary in time: OutcomeUnknown, answered 504, which tells the caller to look
before writing again.
"""

import time
from collections.abc import Callable

from django.db import InterfaceError, OperationalError, connection

# Patroni's leader key lives 20 s (memory_console/ha/config.py) before a standby may be
# promoted; the write waits past that, once, rather than answer a guess.
RESOLVE_SECONDS = 45.0
FIRST_WAIT = 0.25
LONGEST_WAIT = 2.0


class OutcomeUnknown(Exception):
    """The database did not say in time whether a write was committed."""


def stored(looked_up: Callable[[], bool], *, seconds: float | None = None, sleep=time.sleep):
    """Whether the write `looked_up()` finds was committed, asked of the primary on a fresh
    connection until one answers; OutcomeUnknown after `seconds` (RESOLVE_SECONDS).
    `looked_up` runs one query on Django's connection and says whether the row is there."""
    deadline = time.monotonic() + (RESOLVE_SECONDS if seconds is None else seconds)
    wait = FIRST_WAIT
    while True:
        connection.close()  # the broken one, or one a demoted primary may still hold
        try:
            if _on_primary():
                return looked_up()
        except (OperationalError, InterfaceError):
            pass
        if time.monotonic() + wait > deadline:
            connection.close()
            raise OutcomeUnknown("the database did not confirm the write in time")
        sleep(wait)
        wait = min(wait * 2, LONGEST_WAIT)


def _on_primary() -> bool:
    """A standby may not hold the commit yet: only the primary's answer counts."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT NOT pg_is_in_recovery()")
        return cursor.fetchone()[0]
