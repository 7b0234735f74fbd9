"""Signed checkpoints of the ledger's heads, and verification against them.

A hash chain shows an edited event only to someone who kept a later hash: whoever holds the
database's superuser password can edit an event and recompute every hash after it. A
checkpoint is that kept hash, for every stream — its head (sequence number, hash, time) and
event count — signed with an Ed25519 key that never enters the database, and stored by an
auditor elsewhere (mail, a WORM bucket, a notary). Later, `verify_checkpoint` checks the
signature, walks every chain (PostgreSQL re-hashes each stream where it is stored,
ledger.verify), and checks that each stream still holds the checkpointed head at its
sequence: the chain after it then chains to it. A rewrite before the checkpoint changes
that head's hash; deleted events or a truncated and rebuilt stream leave it missing or
different. (Crosby & Wallach's tamper-evident logging, with the commitment kept out of reach.)

The file is JSON: the signed body plus `signature` (base64). The signature covers the
body's canonical JSON (`signed_bytes`: sorted keys, no whitespace, UTF-8), so anyone can
check a checkpoint with any Ed25519 library. `public_key` in the body is a convenience; the
verifier trusts only the key it is given, and a different `key_id` is reported as such.

Keys: `ledger_keygen` writes PEM files (PKCS#8 private, mode 0600; SubjectPublicKeyInfo
public). The signing key is read from a file or from the LEDGER_SIGNING_KEY environment
variable (the PEM text, or base64 of the 32-byte seed) and never stored in the database.
"""

import base64
import hashlib
import json
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from django.db import transaction
from django.utils import timezone

from memory_core.db import prepared
from memory_core.errors import Invalid
from memory_core.ledger import access_log, ledger
from memory_core.models import LedgerCheckpoint

FORMAT = "memory-console/ledger-checkpoint/v1"
SIGNING_KEY_ENV = "LEDGER_SIGNING_KEY"
PRIVATE_KEY_FILE = "ledger-signing.key"
PUBLIC_KEY_FILE = "ledger-signing.pub"
# A checkpoint names a few dozen streams; anything much larger is not one.
MAX_CHECKPOINT_BYTES = 4 * 2**20


# --- keys --------------------------------------------------------------------------------


def _raw_public(public_key: Ed25519PublicKey) -> bytes:
    return public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_id(public_key: Ed25519PublicKey) -> str:
    """SHA-256 (hex) of the raw public key: how a checkpoint and its record name the key."""
    return hashlib.sha256(_raw_public(public_key)).hexdigest()


def write_keypair(directory) -> tuple[Path, Path]:
    """A new Ed25519 key pair in `directory`: the private key (mode 0600, created with that
    mode, so it is never readable by others even for a moment) and the public key. Refuses
    to overwrite an existing key: checkpoints signed with it would no longer verify."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    private_path, public_path = directory / PRIVATE_KEY_FILE, directory / PUBLIC_KEY_FILE
    for path in (private_path, public_path):
        if path.exists():
            raise Invalid(f"{path} exists: a new key would orphan the checkpoints it signed")
    key = Ed25519PrivateKey.generate()
    private_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(private_pem)
    os.chmod(private_path, 0o600)  # whatever the umask made of it
    public_path.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return private_path, public_path


def _parse_private(data: bytes) -> Ed25519PrivateKey:
    text = data.strip()
    try:
        if text.startswith(b"-----BEGIN"):
            key = serialization.load_pem_private_key(text, password=None)
        else:
            key = Ed25519PrivateKey.from_private_bytes(base64.b64decode(text, validate=True))
    except (ValueError, TypeError) as error:
        raise Invalid(f"not an Ed25519 private key: {error}") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise Invalid("not an Ed25519 private key")
    return key


def load_signing_key(path=None) -> Ed25519PrivateKey:
    """The signing key from `path`, else from the LEDGER_SIGNING_KEY environment variable."""
    if path:
        try:
            return _parse_private(Path(path).read_bytes())
        except OSError as error:
            raise Invalid(f"cannot read the signing key: {error.strerror}") from None
    value = os.environ.get(SIGNING_KEY_ENV, "")
    if not value.strip():
        raise Invalid(f"no signing key: pass --key FILE or set {SIGNING_KEY_ENV}")
    return _parse_private(value.encode())


def parse_public_key(data: bytes) -> Ed25519PublicKey:
    """A public key as `ledger_keygen` writes it (PEM), or base64 of the 32 raw bytes."""
    text = data.strip()
    try:
        if text.startswith(b"-----BEGIN"):
            key = serialization.load_pem_public_key(text)
        else:
            key = Ed25519PublicKey.from_public_bytes(base64.b64decode(text, validate=True))
    except (ValueError, TypeError) as error:
        raise Invalid(f"not an Ed25519 public key: {error}") from None
    if not isinstance(key, Ed25519PublicKey):
        raise Invalid("not an Ed25519 public key")
    return key


def load_public_key(path) -> Ed25519PublicKey:
    try:
        return parse_public_key(Path(path).read_bytes())
    except OSError as error:
        raise Invalid(f"cannot read the public key: {error.strerror}") from None


# --- taking a checkpoint -------------------------------------------------------------------

# Every stream's event count and head, in one statement (so one snapshot: a head and its
# count never come from two moments). The count is a scan of the ledger; the head is an
# index probe on ledger_stream_seq_unique.
_HEADS = """
    SELECT c.stream, h.seq, h.hash, h.created_at, c.n
    FROM (SELECT stream, count(*) AS n, max(seq) AS top
          FROM memory_core_ledgerevent GROUP BY stream) AS c
    JOIN memory_core_ledgerevent AS h ON h.stream = c.stream AND h.seq = c.top
    ORDER BY c.stream
"""


def current_heads() -> list[dict]:
    return [
        {
            "stream": stream,
            "seq": seq,
            "hash": sealed,
            "created_at": ledger.timestamp_text(created_at),
            "count": count,
        }
        for stream, seq, sealed, created_at, count in prepared.fetch_all(_HEADS, [])
    ]


def signed_bytes(body: dict) -> bytes:
    """What the signature covers: the body (the file without `signature`) as canonical JSON."""
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def signature_sha256(checkpoint: dict) -> str:
    return hashlib.sha256(base64.b64decode(checkpoint["signature"])).hexdigest()


def take(signing_key: Ed25519PrivateKey, principal, *, record: bool = True) -> dict:
    """Sign every stream's head now; record that it was taken (not the key, not the file)."""
    heads = current_heads()
    public_key = signing_key.public_key()
    body = {
        "format": FORMAT,
        "taken_at": ledger.timestamp_text(timezone.now()),
        "events": sum(h["count"] for h in heads),
        "streams": heads,
        "key_id": key_id(public_key),
        "public_key": base64.b64encode(_raw_public(public_key)).decode(),
    }
    signature = base64.b64encode(signing_key.sign(signed_bytes(body))).decode()
    checkpoint = {**body, "signature": signature}
    if record:
        # The record and the access-log row that says who took it, together or neither.
        with transaction.atomic():
            LedgerCheckpoint.objects.create(
                taken_at=datetime.fromisoformat(body["taken_at"]),
                principal=principal.name,
                key_id=body["key_id"],
                signature_sha256=signature_sha256(checkpoint),
                heads={h["stream"]: {k: h[k] for k in ("seq", "hash", "count")} for h in heads},
                events=body["events"],
            )
            access_log.record(
                principal,
                "ledger.checkpoint",
                201,
                count=body["events"],
                detail={"key_id": body["key_id"], "streams": len(heads)},
            )
    return checkpoint


def dumps(checkpoint: dict) -> str:
    return json.dumps(checkpoint, indent=2, ensure_ascii=False) + "\n"


def default_path(directory, checkpoint: dict) -> Path:
    stamp = checkpoint["taken_at"].replace("-", "").replace(":", "").split(".")[0]
    return Path(directory) / f"checkpoint-{stamp}Z.json"


def latest_file(directory) -> Path | None:
    """The newest checkpoint file in `directory` by the time it names (its file name)."""
    found = sorted(Path(directory).glob("checkpoint-*.json")) if directory else []
    return found[-1] if found else None


def last_taken():
    """The record of the last checkpoint taken (the dashboard's), or None."""
    return LedgerCheckpoint.objects.order_by("-taken_at", "-id").first()


# --- verifying against one -----------------------------------------------------------------


@dataclass(frozen=True)
class CheckpointVerification:
    ok: bool
    count: int = 0
    problem: str = ""
    stream: str | None = None
    seq: int | None = None
    # The checkpointed heads that were checked, and the streams left out (outside `streams`).
    heads: list[dict] = field(default_factory=list)
    skipped: int = 0
    key_id: str = ""
    taken_at: str = ""
    # When the chain walk failed: the event it names (a checkpointed head has none).
    event: object = None

    @property
    def message(self) -> str:
        if self.ok:
            return (
                f"ok: {self.count} events; {len(self.heads)} checkpointed head(s) of "
                f"{self.taken_at} hold"
            )
        where = f"stream {self.stream}, seq {self.seq}: " if self.stream is not None else ""
        event = f" (event {self.event.pk}, kind {self.event.kind})" if self.event else ""
        return f"broken: {where}{self.problem}{event}"


def parse(data: bytes) -> dict:
    """A checkpoint file's JSON, checked for shape (not yet for its signature)."""
    if len(data) > MAX_CHECKPOINT_BYTES:
        raise Invalid("not a checkpoint: too large")
    try:
        checkpoint = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        raise Invalid("not a checkpoint: not JSON") from None
    if not isinstance(checkpoint, dict) or checkpoint.get("format") != FORMAT:
        raise Invalid(f"not a checkpoint: format is not {FORMAT}")
    streams = checkpoint.get("streams")
    if not isinstance(streams, list) or not isinstance(checkpoint.get("signature"), str):
        raise Invalid("not a checkpoint: streams or signature missing")
    for head in streams:
        if not (
            isinstance(head, dict)
            and isinstance(head.get("stream"), str)
            and isinstance(head.get("seq"), int)
            and isinstance(head.get("hash"), str)
            and isinstance(head.get("count"), int)
        ):
            raise Invalid("not a checkpoint: a stream head lacks stream, seq, hash or count")
    return checkpoint


def _signature_holds(checkpoint: dict, public_key: Ed25519PublicKey) -> str:
    """ "" when the signature is the given key's over the body; else what is wrong."""
    body = {k: v for k, v in checkpoint.items() if k != "signature"}
    if body.get("key_id") not in (None, key_id(public_key)):
        return (
            f"signature does not match: the checkpoint names key {str(body['key_id'])[:16]}…, "
            f"the public key given is {key_id(public_key)[:16]}…"
        )
    try:
        public_key.verify(
            base64.b64decode(checkpoint["signature"], validate=True), signed_bytes(body)
        )
    except (InvalidSignature, ValueError):
        return "signature does not match the checkpoint's contents and the public key given"
    return ""


# The stored hash at every checkpointed position, in one statement (an index probe of
# ledger_stream_seq_unique per head).
_HASHES_AT = """
    SELECT e.hash
    FROM unnest(%s::text[], %s::bigint[]) WITH ORDINALITY AS h(stream, seq, n)
    LEFT JOIN memory_core_ledgerevent AS e ON e.stream = h.stream AND e.seq = h.seq
    ORDER BY h.n
"""
# How many events a stream holds up to a position: asked only of a head that is missing.
_COUNT_UPTO = """
    SELECT count(*) FROM memory_core_ledgerevent WHERE stream = %s AND seq <= %s
"""


def _head_problem(head: dict, found: str | None) -> str:
    """What is wrong with one checkpointed head, given the hash now stored at its position,
    after the chain walk held: every stream then runs seq 1, 2, … without a gap, so a head
    that is present has exactly `seq` events at or before it."""
    stream, seq = head["stream"], head["seq"]
    if found is None:
        upto = prepared.fetch_one(_COUNT_UPTO, [stream, seq])[0]
        return (
            "the checkpointed head is missing: events were deleted or the stream was "
            f"truncated and rebuilt ({upto} event(s) at or before it remain)"
        )
    if found != head["hash"]:
        return (
            f"hash {found[:16]}… differs from the checkpoint's {head['hash'][:16]}…: an "
            "event at or before it was changed and the later hashes recomputed, or the "
            "stream was rebuilt"
        )
    if seq != head["count"]:
        return f"{seq} event(s) at or before the head, the checkpoint counted {head['count']}"
    return ""


def verify(checkpoint: dict, public_key, *, streams=None, progress=None):
    """Check `checkpoint` (parsed) against the ledger, trusting only `public_key`.

    `streams`, when given, limits the check to those streams (a tenant's auditor): the
    others' heads are counted as skipped, never probed or named. Returns a
    CheckpointVerification naming the stream and sequence of the first failure.
    """
    base = {"key_id": key_id(public_key), "taken_at": str(checkpoint.get("taken_at", ""))}
    problem = _signature_holds(checkpoint, public_key)
    if problem:
        return CheckpointVerification(ok=False, problem=problem, **base)
    heads = checkpoint["streams"]
    if streams is not None:
        allowed = set(streams)
        checked = [h for h in heads if h["stream"] in allowed]
        walk = sorted(allowed)
    else:
        checked, walk = heads, None
    skipped = len(heads) - len(checked)
    chain = ledger.verify(progress=progress, streams=walk)
    if not chain.ok:
        event = chain.broken
        return CheckpointVerification(
            ok=False,
            count=chain.count,
            problem=chain.problem,
            stream=event.stream,
            seq=event.seq,
            event=event,
            heads=checked,
            skipped=skipped,
            **base,
        )
    found = [
        row[0]
        for row in prepared.fetch_all(
            _HASHES_AT, [[h["stream"] for h in checked], [h["seq"] for h in checked]]
        )
    ]
    for head, stored in zip(checked, found, strict=True):
        problem = _head_problem(head, stored)
        if problem:
            return CheckpointVerification(
                ok=False,
                count=chain.count,
                problem=problem,
                stream=head["stream"],
                seq=head["seq"],
                heads=checked,
                skipped=skipped,
                **base,
            )
    return CheckpointVerification(
        ok=True, count=chain.count, heads=checked, skipped=skipped, **base
    )
