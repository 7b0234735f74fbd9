"""Threads: transcripts, so an auditor can follow a memory back to the conversation that
taught it, and capture, which reads them (docs/agents/api.md, "Threads")."""

from typing import Annotated

from ninja import Path, Router, Status

from memory_console.api.bodies import sent_as_is
from memory_console.api.schemas import (
    ExtractIn,
    ExtractOut,
    HostId,
    MessageIn,
    MessageOut,
    errors,
)
from memory_core import actors, transcripts, visibility
from memory_core.capture.service import extract_thread as extract
from memory_core.models.capture import Trigger
from memory_core.shapes import timestamp

router = Router(tags=["threads"])


@router.post(
    "/{thread_id}/messages",
    response={201: MessageOut, **errors(404, 422)},
    summary="Append a message to a thread's transcript",
)
def post_message(request, thread_id: Annotated[HostId, Path()], payload: MessageIn):
    """The actor is registered when first seen, as in POST /turns: a host commonly records
    the user's opening message before it asks for the first turn. An actor outside the
    key's reach is a 404."""
    principal = request.auth
    actor = actors.actor_for_key(payload.actor, principal.api_key, principal, register=True)
    message = transcripts.record_message(
        actor, thread_id, payload.role, payload.text, principal=principal, run_id=payload.run_id
    )
    return Status(
        201,
        {
            "id": message.uid,
            "thread_id": message.thread.ref,
            "run_id": message.run_id,
            "role": message.role,
            "created_at": timestamp(message.created_at),
        },
    )


@router.post(
    "/{thread_id}/extract",
    response={200: ExtractOut, **errors(404, 409, 410, 422)},
    summary="Capture: write what the thread's new messages teach, through remember",
)
def extract_thread(request, thread_id: Annotated[HostId, Path()], payload: ExtractIn):
    """The configured extractor (an OpenAI-compatible chat model) reads the messages past
    the thread's watermark (one slice of them) and each item it lists is written as the
    actor's agent's `remember` would write it: at actor:<actor>, authored agent, origin
    this thread. 409 when extraction is off; 410 for an erased actor; 404 for an actor
    outside the key's reach or a thread it never posted to; 503 with Retry-After when the
    model cannot be used (nothing written, the watermark unmoved). A second call with no
    new messages writes nothing."""
    principal = request.auth
    actor = actors.actor_for_key(payload.actor, principal.api_key, principal)
    done = extract(actor, thread_id, principal=principal, trigger=Trigger.API)
    chain = actors.chain_of(actor)
    written = [visibility.memory_shape_for_actor(m, chain) for m in done.written]
    return sent_as_is(
        {
            "written": written,
            "unchanged": done.unchanged,
            "dropped": done.dropped,
            "watermark": done.watermark,
        },
        200,
    )
