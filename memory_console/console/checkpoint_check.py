"""The ledger page's "Verify chain" against an uploaded checkpoint (README, "Evidence").

The auditor uploads a checkpoint file and, optionally, the public key to trust. Without an
uploaded key the one configured in LEDGER_PUBLIC_KEY (a .pub file from `ledger_keygen`) is
used; the verdict names which key was trusted. The check covers the streams the user reads
(every stream for a superuser): other streams' heads in the file are counted as skipped,
never probed, and an event outside the user's grants is located, never shown.
"""

from pathlib import Path

from django.conf import settings
from django.utils import timezone

from memory_core.errors import Invalid
from memory_core.ledger import checkpoints

# A checkpoint of a few dozen streams is a few kilobytes; a public key, a few hundred bytes.
MAX_KEY_BYTES = 16 * 1024


def _public_key(request):
    upload = request.FILES.get("public_key")
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


def checkpoint_summary(request, reach) -> dict:
    """Verify the uploaded checkpoint; the summary the session keeps (reads.VERIFICATION_KEY).
    Invalid for an unreadable file or key (nothing is checked then)."""
    upload = request.FILES["checkpoint"]
    if upload.size > checkpoints.MAX_CHECKPOINT_BYTES:
        raise Invalid("that is not a checkpoint: too large")
    checkpoint = checkpoints.parse(upload.read())
    public_key, source = _public_key(request)
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
