"""What a scope token, a key and a fact may look like.

A fact is pasted verbatim into a system prompt, one per line, so anything that could
break the block's line structure (line breaks, control characters) or make a line read
differently from how it is stored (bidirectional overrides) is refused when written,
not escaped when rendered. The length cap is what bounds a prompt: a fact that cannot be
stated in one short line is a document, not a memory.

The patterns use `^...$` so they can be shared with database constraints; in Python,
always apply them with `fullmatch` (a bare `$` also matches before a trailing newline).
"""

from __future__ import annotations

import re
import unicodedata

GLOBAL = "global"
TENANT_KIND = "tenant"
KIND_PATTERN = r"[a-z][a-z0-9_-]{0,31}"
# One name: a tenant's, a team's, or an actor's ref inside its namespace.
NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._@-]{0,127}"
# A ref as stored and as a global-reach key names it: `acme/u1` inside tenant acme, or a
# bare `u1` for an actor outside every tenant (names are per tenant, DESIGN.md §2).
REF_PATTERN = rf"(?:{NAME_PATTERN}/)?{NAME_PATTERN}"
REF_RE = re.compile(rf"^{REF_PATTERN}$")
REF_MAX_CHARS = 257
# `global` is not also a kind: `global:x` would report kind "global" and be mistaken for
# the root scope by anything that branches on a token's kind. A tenant is one name (it is the
# namespace); everything else may be qualified by its tenant: `team:acme/ops`.
SCOPE_RE = re.compile(
    rf"^(?:global|tenant:{NAME_PATTERN}|(?!global:|tenant:){KIND_PATTERN}:{REF_PATTERN})$"
)
SCOPE_MAX_CHARS = 290
KEY_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
KEY_MAX_CHARS = 64

# U+2028/U+2029 are not Cc but still end a line for most readers (and str.splitlines).
_LINE_BREAKS = frozenset("\n\r\u2028\u2029")
# Embeddings/overrides (U+202A-U+202E) and isolates (U+2066-U+2069): they can make a
# line display as something other than what was stored ("Trojan Source").
BIDI_CONTROLS = frozenset(chr(c) for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)])


def is_valid_scope(token: object) -> bool:
    return isinstance(token, str) and SCOPE_RE.fullmatch(token) is not None


def actor_scope(ref: str) -> str:
    """The actor's own scope. Refuses a ref that would not make a valid token."""
    token = f"actor:{ref}"
    if not is_valid_scope(token):
        raise ValueError(f"not a valid actor ref: {ref!r}")
    return token


def is_valid_key(key: object) -> bool:
    return isinstance(key, str) and KEY_RE.fullmatch(key) is not None


def key_problem(key: str) -> str | None:
    """A message a person (or a model) can act on, or None when the key is fine."""
    if not key:
        return "key is empty"
    if len(key) > KEY_MAX_CHARS:
        return f"key is {len(key)} characters; the limit is {KEY_MAX_CHARS} characters"
    if not is_valid_key(key):
        return (
            "key must start with a lowercase letter or digit and use only lowercase "
            "letters, digits, '.', '_' and '-'"
        )
    return None


def fact_problem(text: str, max_chars: int) -> str | None:
    """A message a person (or a model) can act on, or None when the fact is fine."""
    if not text or not text.strip():
        return "fact is empty"
    if len(text) > max_chars:
        return f"fact is {len(text)} characters; the limit is {max_chars} characters"
    if any(ch in _LINE_BREAKS for ch in text):
        return "fact must be a single line; it contains a line break"
    for ch in text:
        if unicodedata.category(ch) in {"Cc", "Cs"}:
            # Cs: a lone surrogate cannot be stored as UTF-8 at all.
            return f"fact contains a control character (U+{ord(ch):04X})"
        if ch in BIDI_CONTROLS:
            return (
                f"fact contains a bidirectional formatting character (U+{ord(ch):04X}), "
                "which can make it display differently from what is stored"
            )
    return None
