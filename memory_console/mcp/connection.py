"""Whose memories an MCP call reads and writes: decided by the host, never by the model.

An MCP client is handed a URL and a key, and a model then picks tools and arguments. So the
actor is bound to the connection, before any tool runs, in one of two ways:

- the URL `/mcp/actors/<ref>/`, for clients that can only be given a URL (the ref named as
  in the REST API: relative to the key's tenant, or qualified); or
- a key bound to one actor (`create_api_key --actor REF`), at `/mcp/`.

Both go through the API's own look-up (actors.actor_for_key): an actor outside the key's
reach, or another actor than the one a bound key serves, is the same "not found" as an
actor that does not exist, logged as an `actor.lookup` refusal. No tool has an actor
argument, so nothing a model sends can name another person.
"""

from dataclasses import dataclass

from memory_core import actors
from memory_core.accounts.principals import Principal
from memory_core.errors import Invalid
from memory_core.ledger import access_log
from memory_core.models import Actor

NO_ACTOR = (
    "this connection names no actor: connect to /mcp/actors/<ref>/, or use a key bound to "
    "one actor (create_api_key --actor)"
)


@dataclass(frozen=True)
class Connection:
    """One MCP request's caller: the key's principal (channel `mcp`) and the actor ref its
    URL names, if any."""

    principal: Principal
    named: str | None = None

    @classmethod
    def for_key(cls, api_key, named: str | None = None) -> "Connection":
        return cls(Principal.for_api_key(api_key, channel="mcp"), named)

    @property
    def api_key(self):
        return self.principal.api_key

    @property
    def actor_ref(self) -> str | None:
        """The actor as this connection names it (echoed in a turn, as the API echoes it)."""
        return self.named if self.named is not None else actors.bound_ref(self.api_key)

    def actor(self, *, register: bool = False) -> Actor:
        """The connection's actor, as the API's look-up finds it for this key (registered on
        first sight when `register`, as POST /turns, /memories and /threads do)."""
        ref = self.actor_ref
        if ref is None:
            with access_log.refusals_logged(self.principal, "actor.lookup"):
                raise Invalid(NO_ACTOR, reason="no_actor")
        return actors.actor_for_key(ref, self.api_key, self.principal, register=register)
