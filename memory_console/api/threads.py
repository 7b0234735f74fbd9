"""POST /threads/{thread_id}/messages: transcripts, so an auditor can follow a memory back
to the conversation that taught it (docs/agents/api.md, "Threads")."""

from typing import Annotated

from ninja import Path, Router, Status

from memory_console.api.schemas import HostId, MessageIn, MessageOut, errors
from memory_core import actors, transcripts
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
