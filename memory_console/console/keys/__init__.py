"""The API keys page: list, create, pause, resume, revoke."""
