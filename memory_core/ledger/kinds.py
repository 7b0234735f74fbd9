"""Every kind of ledger event the code writes, in one list.

The console's event filter suggests exactly these, and an export refuses a `kind` that is
none of them, so a kind added to a service must be added here: tests/test_ledger_kinds.py
reads every `change.event(...)` and `ledger.append(...)` call in the code and fails on a
kind this list lacks, or on one no call writes.
"""

EVENT_KINDS: tuple[str, ...] = (
    # Memories (writes.py, curation.py, undo.py, forgetting.py).
    "memory.remembered",
    "memory.published",
    "memory.corrected",
    "memory.promoted",
    "memory.pinned",
    "memory.unpinned",
    "memory.invalidated",
    "memory.reinstated",
    "memory.reverted",
    "memory.tagged",
    "memory.expiry_set",
    "memory.expiry_cleared",
    "memory.forgotten",
    # Scopes and actors (actors.py, erasure.py).
    "scope.created",
    "actor.registered",
    "actor.updated",
    "actor.erase_started",
    "actor.erased",
    "actor.reopened",
    # API keys (accounts/keys.py).
    "api_key.created",
    "api_key.paused",
    "api_key.resumed",
    "api_key.revoked",
    # People and their grants (accounts/users.py, accounts/grants.py).
    "user.created",
    "user.deactivated",
    "user.reactivated",
    "user.password_set",
    "grant.set",
    "grant.revoked",
    # Gardening proposals (garden/decisions.py).
    "proposal.approved",
    "proposal.dismissed",
    # Conversations: imported, pruned (transcripts.py), and what capture wrote from them
    # (capture/).
    "conversations.imported",
    "history.pruned",
    "capture.extracted",
)
