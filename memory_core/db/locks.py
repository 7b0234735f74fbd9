"""Transaction-scoped advisory locks, for races no row lock can cover.

Two first writes of one (scope, key) have no row to lock yet; two appends to one ledger
stream must not both read the same tail. Both queue on an advisory lock derived from a
stable 64-bit hash of their identity, released at commit or rollback.
"""

import hashlib

from django.db import connection


def lock_id(*parts) -> int:
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def advisory_xact_lock(*parts) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [lock_id(*parts)])
