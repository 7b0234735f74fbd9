"""The actor search and the actor page: what applies to an actor, its conflicts, its block
preview, its erasure."""
