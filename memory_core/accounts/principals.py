"""Who is acting: an agent's API key, a console user, or an operator at the command line."""

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Principal:
    kind: str  # "api_key" | "user" | "system"
    name: str  # what the ledger and access log record: "key:ab12cd34", "user:alice", "cli"
    channel: str  # "api" | "mcp" | "console" | "cli" (models.access.Channel)
    user: Any = None
    api_key: Any = None
    # An operator importing on a person's behalf: the name recorded as a memory's origin.
    on_behalf_of: str | None = None

    @property
    def is_human(self) -> bool:
        """People (console users, operators at the CLI) may write above an actor's scope."""
        return self.kind in {"user", "system"}

    @classmethod
    def for_user(cls, user, channel: str = "console") -> "Principal":
        return cls(kind="user", name=f"user:{user.get_username()}", channel=channel, user=user)

    @classmethod
    def for_api_key(cls, api_key, channel: str = "api") -> "Principal":
        """An agent's key, over the REST API or the MCP endpoint (channel "mcp"): the same
        name, reach and rules either way; only the access log's channel tells them apart."""
        return cls(kind="api_key", name=api_key.principal, channel=channel, api_key=api_key)

    @classmethod
    def system(cls, name: str = "cli", on_behalf_of: str | None = None) -> "Principal":
        return cls(kind="system", name=name, channel="cli", on_behalf_of=on_behalf_of)

    @property
    def username(self) -> str:
        """The person a human-authored memory is attributed to."""
        if self.on_behalf_of:
            return self.on_behalf_of
        if self.user is not None:
            return self.user.get_username()
        return self.name
