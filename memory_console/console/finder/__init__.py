"""The memory finder (`/memories/`), and bulk actions on the memories selected there or on
a scope page."""
