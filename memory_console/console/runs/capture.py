"""Capture on the conversation page: what was extracted from a thread (each extraction, the
memories it wrote or found unchanged, linked, the message it read up to and that message's
run), and the administrators' "Extract now" (POST `/capture/extract/`).

Reads stay within the page's thread, which the user was allowed to read; the memories an
extraction wrote live at that thread's actor's own scope, so whoever reads the thread reads
them. A memory forgotten since is listed as forgotten, by id, never with its text.
"""

from dataclasses import dataclass, field

from django import forms
from django.contrib import messages
from django.shortcuts import redirect

from memory_console.console.common.access import console_view, threads_for_reader
from memory_console.console.common.forms import ActionForm
from memory_console.console.common.links import thread_path
from memory_console.console.common.methods import post_only
from memory_core.accounts.permissions import can_administer
from memory_core.accounts.principals import Principal
from memory_core.capture import extractor
from memory_core.capture.service import extract_thread
from memory_core.errors import Conflict, Unavailable
from memory_core.models import Extraction, Memory
from memory_core.models.capture import Trigger
from memory_core.rules.inputs import HOST_ID_MAX
from memory_core.rules.scopes import REF_MAX_CHARS

# Extractions listed per thread, newest first.
SHOWN = 20


@dataclass
class Captured:
    """The capture section of one thread on the page."""

    extractions: list[Extraction] = field(default_factory=list)
    more: bool = False
    can_extract: bool = False  # the button: extraction on, and the user administers the actor
    enabled: bool = False


def attach(user, pages) -> None:
    """Give each ThreadPage its `capture` (the section _captured.html shows)."""
    enabled = extractor.enabled()
    principal = Principal.for_user(user)
    for page in pages:
        thread = page.thread
        rows = list(
            Extraction.objects.filter(actor_id=thread.actor_id, thread_ref=thread.ref).order_by(
                "-created_at", "-id"
            )[: SHOWN + 1]
        )
        _with_memories(rows[:SHOWN])
        page.capture = Captured(
            extractions=rows[:SHOWN],
            more=len(rows) > SHOWN,
            can_extract=enabled and can_administer(principal, thread.actor.scope),
            enabled=enabled,
        )


def shown(page) -> list[str]:
    """The ids of the memories the page's capture section shows (its access-log row)."""
    return [uid for e in page.capture.extractions for uid, m, _ in e.memories if m is not None]


def _with_memories(extractions: list[Extraction]) -> None:
    """Each extraction's `memories`: (uid, Memory or None when forgotten, written?)."""
    uids = {uid for e in extractions for uid in (*e.written, *e.unchanged)}
    found = {m.uid: m for m in Memory.objects.filter(uid__in=uids)} if uids else {}
    for e in extractions:
        e.memories = [(uid, found.get(uid), True) for uid in e.written] + [
            (uid, found.get(uid), False) for uid in e.unchanged
        ]


class ExtractForm(ActionForm):
    """The thread to extract: the host's thread id and its actor (stored ref)."""

    actor = forms.CharField(max_length=REF_MAX_CHARS)
    thread = forms.CharField(max_length=HOST_ID_MAX, strip=False)


@console_view
@post_only("console:threads")
def capture_extract(request):
    """An administrator of the thread's actor runs one extraction now (as the API would, by
    the same service): the memories it writes are the agent's, at the actor's own scope,
    and the ledger names the person who asked. An auditor is refused (403, logged); a
    thread beyond the user's grants is a 404. With extraction off, or the model not
    answering, the conversation page says so."""
    values = ExtractForm(request.POST).cleaned()
    [thread] = threads_for_reader(
        request.user, values["thread"], values["actor"], limit=1, action="extract"
    )
    page = thread_path(thread.ref, thread.actor.ref) or "/threads/"
    try:
        done = extract_thread(
            thread.actor,
            thread.ref,
            principal=Principal.for_user(request.user),
            trigger=Trigger.CONSOLE,
        )
    except (Conflict, Unavailable) as error:
        messages.error(request, error.message)
        return redirect(page)
    if done.record is None:
        messages.info(request, "Nothing new to extract: every message was read already.")
    else:
        messages.success(
            request,
            f"Extracted {done.record.messages} message(s): {len(done.written)} memor"
            f"{'y' if len(done.written) == 1 else 'ies'} written, {done.unchanged} unchanged, "
            f"{done.dropped} dropped" + ("; more messages wait." if done.more else "."),
        )
    return redirect(page)
