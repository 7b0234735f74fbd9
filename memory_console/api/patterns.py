"""memory_core's input rules, spelled as the OpenAPI document states them.

The services enforce each rule and name it when they refuse ("key must start with …",
"fact is 241 characters; the limit is 240 characters"); the document states the same rule
as a JSON Schema `pattern`, so a generated client, and schemathesis, know exactly what the
server takes. Refs, scope tokens and keys reuse memory_core.rules.scopes' own patterns; the
character rules of memory_core.rules.inputs and scopes.fact_problem are restated as character
classes, and tests/test_api_schema_rules.py holds each one to its rule, read both as
JSON Schema (ECMA-262) and by Python's `re`.

Every pattern is anchored with `^…$`, because JSON Schema patterns are unanchored. In
ECMA-262 `$` is the end of the string; in Python it also matches before a trailing
newline, so apply these in Python with `fullmatch`, as memory_core does its own.
"""

from memory_core.rules.scopes import KEY_RE, KIND_PATTERN, NAME_PATTERN, REF_PATTERN

# General category Cc: C0 and C1 controls, DEL.
_CONTROLS = r"\x00-\x1f\x7f-\x9f"
_LINE_SEPARATORS = r"\u2028\u2029"
# Embeddings/overrides and isolates (memory_core.rules.scopes.BIDI_CONTROLS).
_BIDI = r"\u202a-\u202e\u2066-\u2069"
# What str.strip() removes besides the controls: a fact, or a search, of nothing but these
# is empty.
_SPACES = r"\x20\xa0\u1680\u2000-\u200a\u202f\u205f\u3000"

# An actor ref: `u1`, or tenant-qualified `acme/u1`.
REF = rf"^{REF_PATTERN}$"
# A memory key (scopes.KEY_RE, already anchored).
KEY = KEY_RE.pattern
# One of an actor's memberships: a scope token (scopes.SCOPE_RE) other than `global` and
# `actor:…`.
MEMBERSHIP = rf"^(?:tenant:{NAME_PATTERN}|(?!global:|tenant:|actor:){KIND_PATTERN}:{REF_PATTERN})$"

# run_id, thread_id, tool_call_id (inputs.host_id_problem): no control characters, line
# or paragraph separators, or bidirectional formatting.
HOST_ID = rf"^[^{_CONTROLS}{_LINE_SEPARATORS}{_BIDI}]*$"

# Free text that is multi-line by nature (a message, a query, a display name;
# inputs.text_problem): any character but the controls other than tab, LF and CR.
_TEXT_CHAR = r"[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"
TEXT = rf"^{_TEXT_CHAR}*$"
# A search: free text with something in it besides white space.
_TEXT_INK = rf"[^{_CONTROLS}{_LINE_SEPARATORS}{_SPACES}]"
SEARCH = rf"^{_TEXT_CHAR}*{_TEXT_INK}{_TEXT_CHAR}*$"

# A fact (scopes.fact_problem): one line, no controls or bidirectional formatting, and
# something in it besides white space.
_FACT_CHAR = rf"[^{_CONTROLS}{_LINE_SEPARATORS}{_BIDI}]"
_FACT_INK = rf"[^{_CONTROLS}{_LINE_SEPARATORS}{_BIDI}{_SPACES}]"
FACT = rf"^{_FACT_CHAR}*{_FACT_INK}{_FACT_CHAR}*$"
