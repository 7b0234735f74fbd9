"""Read helpers that more than one console page shows: a conversation grouped by run (the
conversation and attribution pages), the last ledger check (the ledger page and the
dashboard) and an actor's breadcrumbs (the thread and run pages). Views import these, never
one another."""

from dataclasses import dataclass, field
from datetime import datetime
from itertools import groupby

from memory_core.accounts.permissions import readable_scope_roles
from memory_core.actors import ancestors
from memory_core.models import Actor, Digest, Memory, Message, Thread

# The last chain check, kept in the checker's session: it was computed over *their*
# streams, so it is theirs to see, and the dashboard shows it instead of re-walking the
# whole chain on every load.
VERIFICATION_KEY = "ledger_verification"


@dataclass
class RunGroup:
    """Consecutive messages of one run (or of no run), as the page shows them."""

    run_id: str | None
    messages: list[Message]
    highlighted: bool = False
    has_run_page: bool = False
    learned: list[Memory] = field(default_factory=list)


def group_by_run(messages, thread: Thread, *, highlight: str | None = None, learned=None):
    """Messages (in order) -> RunGroups; each knows whether its run has a stored digest."""
    runs = {m.run_id for m in messages if m.run_id}
    with_digest = set()
    if runs:
        # digest_one_per_actor_run's index: (actor, run_id).
        with_digest = set(
            Digest.objects.filter(actor_id=thread.actor_id, run_id__in=runs).values_list(
                "run_id", flat=True
            )
        )
    learned = learned or {}
    return [
        RunGroup(
            run_id=run_id,
            messages=list(group),
            highlighted=bool(highlight) and run_id == highlight,
            has_run_page=run_id in with_digest,
            learned=learned.get(run_id, []) if run_id else [],
        )
        for run_id, group in groupby(messages, key=lambda m: m.run_id)
    ]


def _checkpoint_message(summary: dict) -> str:
    checkpoint = summary["checkpoint"]
    against = (
        f"checkpoint of {checkpoint['taken_at']}, {checkpoint['key_source']} key "
        f"{checkpoint['key_id'][:16]}…"
    )
    if summary["ok"]:
        skipped = checkpoint["skipped"]
        others = f"; {skipped} stream(s) outside your grants not checked" if skipped else ""
        return (
            f"ok: {summary['count']} events; {checkpoint['heads']} checkpointed head(s) "
            f"hold ({against}){others}"
        )
    broken = summary["broken"]
    if broken is not None and not broken["readable"]:
        where = f"stream {broken['stream']}, seq {broken['seq']} (an event outside your grants)"
    elif broken is not None:
        where = (
            f"event {broken['id']} (stream {broken['stream']}, seq {broken['seq']}, "
            f"kind {broken['kind']})"
        )
    elif checkpoint["stream"] is not None:
        where = f"stream {checkpoint['stream']}, seq {checkpoint['seq']}"
    else:
        return f"broken: {summary['problem']} ({against})"
    return f"broken: {where}: {summary['problem']} ({against})"


def verification_message(summary: dict) -> str:
    if summary.get("checkpoint"):
        return _checkpoint_message(summary)
    if summary["ok"]:
        return f"ok: {summary['count']} events"
    broken, count = summary["broken"], summary["count"]
    before = f"{count} event{'s' if count != 1 else ''} before it verified"
    if broken["readable"]:
        where = (
            f"event {broken['id']} (stream {broken['stream']}, seq {broken['seq']}, "
            f"kind {broken['kind']})"
        )
    else:
        where = f"stream {broken['stream']}, seq {broken['seq']} (an event outside your grants)"
    return f"broken: {where}: {summary['problem']}; {before}"


def shown_verification(summary: dict | None) -> dict | None:
    if not summary:
        return None
    return {
        **summary,
        "at": datetime.fromisoformat(summary["at"]),
        "message": verification_message(summary),
    }


def last_verification(request) -> dict | None:
    """The last chain check this person ran, for the ledger page and the dashboard."""
    return shown_verification(request.session.get(VERIFICATION_KEY))


def actor_trail(user, actor: Actor) -> list[dict]:
    """The scopes above an actor, widest first, each marked readable (its chip links to the
    scope page) or not (plain text: a link would lead to a 404). The actor's own scope is
    left out: the trail names the actor itself next, linked to its page."""
    readable = readable_scope_roles(user)
    return [
        {"scope": s, "readable": readable is None or s.id in readable}
        for s in reversed(ancestors(actor.scope)[1:])
    ]
