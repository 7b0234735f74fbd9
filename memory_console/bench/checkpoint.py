"""The bench's measure of `verify_ledger --checkpoint`: events verified per second.

A checkpoint is taken with a throwaway key (the bench never touches a real signing key, and
records nothing: `record=False`), then verified as the command does: the signature, every
chain re-hashed where it is stored (ledger.verify), and each stream's checkpointed head.
"""

import time

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey


def verify_checkpoint_timing() -> dict:
    from memory_core.accounts.principals import Principal
    from memory_core.ledger import checkpoints

    key = Ed25519PrivateKey.generate()
    checkpoint = checkpoints.take(key, Principal.system("cli:bench"), record=False)
    started = time.perf_counter()
    result = checkpoints.verify(checkpoint, key.public_key())
    elapsed = time.perf_counter() - started
    if not result.ok:
        raise RuntimeError(
            f"the bench ledger does not verify against its checkpoint: {result.message}"
        )
    return {"events": result.count, "events_per_s": round(result.count / elapsed, 1)}
