"""Checks for the free-form strings hosts send besides facts: ids, queries, names, messages.

Each returns a message naming the field, or None. They keep malformed input a clear 422
instead of a database error: values wider than their column, NUL (PostgreSQL text cannot
hold it) and lone surrogates (not encodable as UTF-8).
"""

import unicodedata

from memory_core.errors import Invalid
from memory_core.rules.scopes import BIDI_CONTROLS

HOST_ID_MAX = 128


# U+2028/U+2029 are not Cc, but they end a line for most readers (and str.splitlines), so
# an id holding one would break any one-line-per-id listing or log.
_LINE_SEPARATORS = frozenset("\u2028\u2029")


def _bad_char(value: str, *, allow_layout: bool, allow_bidi: bool = True) -> str | None:
    for ch in value:
        category = unicodedata.category(ch)
        if category == "Cs" or ch == "\x00":
            return f"U+{ord(ch):04X}"
        if category == "Cc" and not (allow_layout and ch in "\n\r\t"):
            return f"U+{ord(ch):04X}"
        if not allow_layout and ch in _LINE_SEPARATORS:
            return f"U+{ord(ch):04X}"
        if not allow_bidi and ch in BIDI_CONTROLS:
            return f"U+{ord(ch):04X}"
    return None


def bad_host_id_char(value: str) -> str | None:
    """The first character an id must not hold (`U+2028`), or None: control characters,
    line and paragraph separators, bidirectional formatting."""
    return _bad_char(value, allow_layout=False, allow_bidi=False)


def host_id_problem(value: str | None, name: str) -> str | None:
    """run_id, thread_id, tool_call_id: 1-128 printable characters, when given."""
    if value is None:
        return None
    if not value or len(value) > HOST_ID_MAX:
        return f"{name} must be 1-{HOST_ID_MAX} characters"
    bad = bad_host_id_char(value)
    if bad:
        return (
            f"{name} contains a control, line-separator or bidirectional formatting "
            f"character ({bad})"
        )
    return None


def text_problem(value: str | None, name: str, max_chars: int) -> str | None:
    """Free text (a query, a display name, a message): bounded, no NUL or surrogates."""
    if value is None:
        return None
    if len(value) > max_chars:
        return f"{name} is {len(value)} characters; the limit is {max_chars}"
    bad = _bad_char(value, allow_layout=True)
    if bad:
        return f"{name} contains a character that cannot be stored ({bad})"
    return None


def require(*problems: str | None) -> None:
    """Raise Invalid for the first problem found."""
    for problem in problems:
        if problem:
            raise Invalid(problem)
