"""The scope tree, one scope's live memories, and publishing there."""
