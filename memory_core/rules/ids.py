"""Public ids: a prefix and a time-ordered random part (ULID layout, Crockford base32).

The database integer never leaves the server: ids that reach agents, URLs and the ledger are
these strings, so they reveal neither row counts nor insertion order across tenants.
"""

import os
import time

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def _encode(number: int, length: int) -> str:
    chars = []
    for _ in range(length):
        number, rest = divmod(number, 32)
        chars.append(_ALPHABET[rest])
    return "".join(reversed(chars))


def new_id(prefix: str) -> str:
    millis = int(time.time() * 1000) & ((1 << 48) - 1)
    randomness = int.from_bytes(os.urandom(10), "big")
    return f"{prefix}_{_encode((millis << 80) | randomness, 26)}"


def memory_id() -> str:
    return new_id("mem")


def message_id() -> str:
    return new_id("msg")


def digest_id() -> str:
    return new_id("dig")


def api_key_id() -> str:
    return new_id("key")


def proposal_id() -> str:
    return new_id("prop")


def extraction_id() -> str:
    return new_id("ext")
