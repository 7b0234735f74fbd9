"""Attribution: from a line a prompt carried back to the memory version behind it.

A pasted line is matched by equality on the exact forms a stored prompt line can take
(block.ENTRY_MARK or block.OVERRIDE_MARK in front of the same body), so the lookup is an
index probe on the hash of DigestLine.text (`digestline_text_hash`), never a LIKE over every
line.
After a forget the original text exists nowhere, so it cannot match: the stored line now
reads `[forgotten]` (`- [forgotten]` in the block), and that, or the run id, is what an
auditor looks up instead.
"""

from functools import reduce
from operator import or_

from django.db.models import F, Q, Value

from memory_core.models import LedgerEvent, Message, Thread
from memory_core.models.digests import TextHash
from memory_core.rules.block import ENTRY_MARK, OVERRIDE_MARK

# A prompt line is at most a marker, a scope token, a key and a fact: far below this.
MAX_LINE_CHARS = 2000
# The messages shown on either side of the originating run, for context.
CONTEXT_MESSAGES = 3
# A run's messages shown at most (a run is one turn: a handful in practice).
MAX_RUN_MESSAGES = 200

_MARKS = (ENTRY_MARK.strip(), OVERRIDE_MARK.strip())  # "-" and "↳"


def line_body(pasted: str) -> str:
    """The pasted line without surrounding whitespace and without its marker.

    `-  [actor:u1] tz: x `, `[actor:u1] tz: x` and `    ↳ [global] …` all give the body
    after the marker. Only the first non-empty line counts: a prompt line is one line.
    """
    first = next((ln for ln in (pasted or "").splitlines() if ln.strip()), "")
    body = first.strip()
    for mark in _MARKS:
        if body.startswith(mark):
            return body[len(mark) :].strip()
    return body


def line_forms(pasted: str) -> list[str]:
    """Every exact text a stored DigestLine showing this line can have (empty if none).

    A stored line keeps its marker, except a scrubbed one, which reads `[forgotten]` alone
    (block.scrub), so the bare body is a candidate too.
    """
    body = line_body(pasted)
    if not body:
        return []
    return [ENTRY_MARK + body, OVERRIDE_MARK + body, body]


def lines_showing(lines, pasted: str):
    """`lines` (DigestLines) narrowed to those that showed `pasted`, in any of its exact
    forms: found by the hash of each form (digestline_text_hash), then compared whole."""
    forms = line_forms(pasted)
    return lines.alias(text_hash=TextHash(F("text"))).filter(
        text_hash__in=[TextHash(Value(form)) for form in forms], text__in=forms
    )


def forgotten_events(uids) -> dict[str, LedgerEvent]:
    """{memory uid: the memory.forgotten event that erased it} for the uids given.

    The event's payload lists every erased version under "memories"; JSONB containment
    (`payload -> 'memories' @> '["mem_…"]'`) finds it. The kind filter keeps to
    ledger_kind_idx; the containment test then runs on forget events only.
    """
    uids = sorted(set(uids))
    if not uids:
        return {}
    about = reduce(or_, (Q(payload__memories__contains=[uid]) for uid in uids))
    found: dict[str, LedgerEvent] = {}
    for event in LedgerEvent.objects.filter(kind="memory.forgotten").filter(about).order_by("id"):
        for uid in event.payload.get("memories", []):
            if uid in uids:
                found.setdefault(uid, event)
    return found


def run_window(thread: Thread, run_id: str) -> tuple[list[Message], bool]:
    """The messages of `run_id` in `thread`, with a few before and after for context.

    Returns (messages in order, whether any message of the run is still stored). Messages
    of other runs that fall between the run's first and last are kept: that is how the
    conversation went. Every query here walks message_thread_run_idx or
    message_thread_recent_idx from a known point, never the whole thread.
    """
    own = thread.messages.filter(run_id=run_id)
    first = own.order_by("created_at", "id").first()
    if first is None:
        return [], False
    last = own.order_by("-created_at", "-id").first()
    between = list(
        thread.messages.filter(
            created_at__gte=first.created_at, created_at__lte=last.created_at
        ).order_by("created_at", "id")[:MAX_RUN_MESSAGES]
    )
    before = list(
        thread.messages.filter(created_at__lt=first.created_at).order_by("-created_at", "-id")[
            :CONTEXT_MESSAGES
        ]
    )
    after = list(
        thread.messages.filter(created_at__gt=last.created_at).order_by("created_at", "id")[
            :CONTEXT_MESSAGES
        ]
    )
    return [*reversed(before), *between, *after], True
