"""The admin console: server-rendered pages with htmx fragments (CONSOLE.md)."""
