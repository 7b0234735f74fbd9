"""Conversations from chat exports (cold start): each one a thread of the actor, its messages
in order, so that capture has something to read (chat_exports.py reads the files).

Each conversation is one audited change: its thread and its messages commit together or
not at all, with one access-log row (counts and the thread id, never text). A conversation
already imported adds nothing; one imported before from a shorter export gets the messages
past those it holds (a thread's messages are kept in the order they were posted). The file
as a whole is one `conversations.imported` ledger event with its counts.
"""

from dataclasses import dataclass

from memory_core.changes import audited
from memory_core.db.locks import advisory_xact_lock
from memory_core.errors import Gone
from memory_core.models import Actor, Message, Thread

from .chat_exports import Conversation

ACTION = "conversation.import"


@dataclass
class Imported:
    threads: int = 0  # conversations that gained messages
    messages: int = 0
    unchanged: int = 0  # already imported whole
    empty: int = 0  # no message with text


def import_conversation(actor: Actor, conversation: Conversation, *, principal) -> int:
    """Add the conversation's messages the actor's thread does not hold yet; how many."""
    with audited(principal, ACTION, actor_ref=actor.ref, scope=actor.scope.token) as change:
        if actor.erased_at is not None:
            raise Gone(f"actor {actor.ref!r} was erased")
        # Two imports of one file at once: the second waits here, then finds the messages.
        advisory_xact_lock("conversation.import", actor.pk, conversation.thread_ref)
        thread, _ = Thread.objects.get_or_create(actor=actor, ref=conversation.thread_ref)
        held = thread.messages.count()
        new = conversation.messages[held:]
        if not new:
            change.unchanged()
            return 0
        Message.objects.bulk_create(
            [Message(thread=thread, role=role, text=text) for role, text in new]
        )
        change.log(201, count=len(new), detail={"thread": thread.ref, "messages": len(new)})
    return len(new)


def imported(actor: Actor, counts: Imported, *, principal, fmt: str) -> None:
    """The file's summary: one ledger event with its counts (when it added anything)."""
    with audited(principal, "conversations.import", actor_ref=actor.ref) as change:
        if not counts.messages:
            change.unchanged()
            return
        change.event(
            "conversations.imported",
            actor.scope,
            {"threads": counts.threads, "messages": counts.messages},
            actor_ref=actor.ref,
        )
        change.log(
            201,
            scope=actor.scope.token,
            count=counts.messages,
            detail={"threads": counts.threads, "format": fmt},
        )
