"""Users and their grants (superusers)."""
