"""Load and fault tests against a real server and a private PostgreSQL."""
