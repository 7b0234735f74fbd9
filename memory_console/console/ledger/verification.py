"""The ledger page's "Verify chain": the hash chains the user reads, walked; or an uploaded
checkpoint (README, "Evidence") checked against them. The summary is kept in the checker's
session, and shown on the ledger page and the dashboard.

The auditor uploads a checkpoint file and, optionally, the public key to trust. Without an
uploaded key the one configured in LEDGER_PUBLIC_KEY (a .pub file from `ledger_keygen`) is
used; the verdict names which key was trusted. The check covers the streams the user reads
(every stream for a superuser): other streams' heads in the file are counted as skipped,
never probed, and an event outside the user's grants is located, never shown.
"""

from datetime import datetime
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from memory_core.errors import Invalid
from memory_core.ledger import checkpoints, ledger

# The last chain check, kept in the checker's session: it was computed over *their*
# streams, so it is theirs to see, and the dashboard shows it instead of re-walking the
# whole chain on every load.
VERIFICATION_KEY = "ledger_verification"

# A checkpoint of a few dozen streams is a few kilobytes; a public key, a few hundred bytes.
MAX_KEY_BYTES = 16 * 1024


def _public_key(upload):
    """The uploaded public key, or else the configured one, and which it is."""
    if upload is not None:
        if upload.size > MAX_KEY_BYTES:
            raise Invalid("that is not a public key: too large")
        return checkpoints.parse_public_key(upload.read()), "uploaded"
    configured = settings.LEDGER_PUBLIC_KEY
    if not configured:
        raise Invalid(
            "upload the public key to trust with the checkpoint (no LEDGER_PUBLIC_KEY is "
            "configured)"
        )
    return checkpoints.load_public_key(Path(configured)), "configured"


def configured_key_id() -> str | None:
    """The configured public key's id, for the form to show (None when none is usable)."""
    if not settings.LEDGER_PUBLIC_KEY:
        return None
    try:
        return checkpoints.key_id(checkpoints.load_public_key(settings.LEDGER_PUBLIC_KEY))
    except Invalid:
        return None


def chain_summary(reach) -> dict:
    """Walk the chains of the streams `reach` reads; the summary the session keeps
    (VERIFICATION_KEY)."""
    streams = None if reach.everything else sorted(reach.streams)
    result = ledger.verify(streams=streams)
    summary = {
        "ok": result.ok,
        "count": result.count,
        "at": timezone.now().isoformat(),
        "streams": streams,
        "problem": result.problem,
        "broken": None,
    }
    if result.broken is not None:
        event = result.broken
        summary["broken"] = {
            "id": event.id,
            "stream": event.stream,
            "seq": event.seq,
            "kind": event.kind,
            # A stream can hold scopes the user does not read (an auditor of a team reads
            # its tenant's stream only in part): such an event is located, never shown.
            "readable": reach.reads_scope(event.scope),
        }
    return summary


def checkpoint_summary(upload, key_upload, reach) -> dict:
    """Verify the uploaded checkpoint (with the uploaded public key, if any); the summary
    the session keeps (VERIFICATION_KEY). Invalid for an unreadable file or key (nothing is
    checked then)."""
    if upload.size > checkpoints.MAX_CHECKPOINT_BYTES:
        raise Invalid("that is not a checkpoint: too large")
    checkpoint = checkpoints.parse(upload.read())
    public_key, source = _public_key(key_upload)
    streams = None if reach.everything else sorted(reach.streams)
    result = checkpoints.verify(checkpoint, public_key, streams=streams)
    broken = None
    if result.event is not None:
        event = result.event
        broken = {
            "id": event.id,
            "stream": event.stream,
            "seq": event.seq,
            "kind": event.kind,
            "readable": reach.reads_scope(event.scope),
        }
    return {
        "ok": result.ok,
        "count": result.count,
        "at": timezone.now().isoformat(),
        "streams": streams,
        "problem": result.problem,
        "broken": broken,
        "checkpoint": {
            "taken_at": result.taken_at,
            "key_id": result.key_id,
            "key_source": source,
            "heads": len(result.heads),
            "skipped": result.skipped,
            "stream": result.stream,
            "seq": result.seq,
        },
    }


def _count(n: int, thing: str) -> str:
    return f"{n} {thing}{'' if n == 1 else 's'}"


def _checkpoint_message(summary: dict) -> str:
    checkpoint = summary["checkpoint"]
    against = (
        f"checkpoint of {checkpoint['taken_at']}, {checkpoint['key_source']} key "
        f"{checkpoint['key_id'][:16]}…"
    )
    if summary["ok"]:
        skipped = checkpoint["skipped"]
        others = f"; {_count(skipped, 'stream')} outside your grants not checked" if skipped else ""
        heads = checkpoint["heads"]
        return (
            f"ok: {_count(summary['count'], 'event')}; {_count(heads, 'checkpointed head')} "
            f"{'holds' if heads == 1 else 'hold'} ({against}){others}"
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
        return f"ok: {_count(summary['count'], 'event')}"
    broken, count = summary["broken"], summary["count"]
    before = f"{_count(count, 'event')} before it verified"
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
