"""How the finder and the scope page name memory_core.bulk's actions (views import this,
never one another)."""

BULK_LABELS = {
    "pin": "Pin",
    "unpin": "Unpin",
    "invalidate": "Invalidate",
    "republish": "Republish wider",
    "forget": "Forget",
}
