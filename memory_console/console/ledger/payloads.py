"""A ledger event's payload as the console shows it (ledger page, its live rows, the memory
page, the dashboard): each field a name and its values; ids as code; a memory id linked to
its page only when the reader may open it (otherwise the id alone, as the access log shows
one: a link would lead to a 404); scope tokens linked; lists as several values, an empty
one as "none"; booleans as yes/no; never a Python repr.

`mark_payloads` settles what each event of a page shows, with one query for the page's
memory ids; the `payload_fields` template filter (templatetags/console.py) shows an event
no view marked without any memory link.
"""

import json

from django.urls import reverse

from memory_console.console.common import links
from memory_core.accounts.permissions import readable_scope_roles
from memory_core.models import Memory

# Payload fields holding memory ids (gardening names the versions its approval wrote and
# retired), those holding scope tokens, and those holding other ids.
MEMORY_FIELDS = frozenset(
    {"memory", "memories", "supersedes", "promoted_from", "restores", "created", "retired"}
)
SCOPE_FIELDS = frozenset({"scopes", "reach", "from_scope"})
ID_FIELDS = frozenset({"api_key", "bulk", "proposal"})


def memory_ids(event) -> list[str]:
    """The memory ids an event's payload names."""
    found = []
    for name, value in (event.payload or {}).items():
        if name in MEMORY_FIELDS:
            found.extend(v for v in (value if isinstance(value, list) else [value]) if v)
    return [uid for uid in found if isinstance(uid, str)]


def payload_fields(event, readable: frozenset[str] | set[str] = frozenset()) -> list[dict]:
    """The event's payload as shown, memory ids in `readable` linked to their pages."""
    fields = []
    for name, value in (event.payload or {}).items():
        if value is None:
            continue
        if isinstance(value, list) and not value:
            fields.append({"name": name, "values": [{"text": "none", "muted": True}]})
            continue
        values = value if isinstance(value, list) else [value]
        fields.append({"name": name, "values": [_shown(name, v, readable) for v in values]})
    return fields


def _shown(name: str, value, readable) -> dict:
    if isinstance(value, bool):
        return {"text": "yes" if value else "no"}
    if name in MEMORY_FIELDS and isinstance(value, str):
        href = reverse("console:memory", kwargs={"uid": value}) if value in readable else None
        return {"text": value, "code": True, "href": href}
    if name in SCOPE_FIELDS and isinstance(value, str):
        return {"text": value, "code": True, "href": links.scope_path(value)}
    if name in ID_FIELDS:
        return {"text": str(value), "code": True}
    if isinstance(value, dict | list):
        return {"text": json.dumps(value, ensure_ascii=False), "code": True}
    return {"text": str(value)}


def readable_memories(user, uids) -> set[str]:
    """Those of `uids` the user may open: stored (a forgotten memory is not) and at a scope
    the user reads. One query."""
    uids = sorted(set(uids))
    if not uids:
        return set()
    roles = readable_scope_roles(user)
    found = Memory.objects.filter(uid__in=uids).values_list("uid", "scope_id")
    return {uid for uid, scope_id in found if roles is None or scope_id in roles}


def mark_payloads(user, events):
    """Give each event `shown_payload` (payload_fields, linked as `user` may follow);
    returns `events`."""
    events = list(events)
    readable = readable_memories(user, (uid for e in events for uid in memory_ids(e)))
    for event in events:
        event.shown_payload = payload_fields(event, readable)
    return events
