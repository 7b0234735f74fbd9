"""PUT/GET /actors/{ref}: an actor's memberships, and so its chain (docs/agents/api.md,
"Actors")."""

from typing import Annotated

from ninja import Path, Router

from memory_console.api.schemas import ActorIn, ActorOut, ActorRef, errors
from memory_core import actors

router = Router(tags=["actors"])

RefParam = Annotated[ActorRef, Path()]


def actor_out(actor, named: str) -> dict:
    """`ref` as the caller named it (`u1` or `acme/u1`); `scopes` as stored tokens."""
    return {
        "ref": named,
        "display_name": actor.display_name,
        "scopes": list(actors.chain_of(actor)),
    }


# `{path:ref}`: a ref qualified by its tenant holds a "/" (`acme/u1`).
@router.put(
    "/{path:ref}",
    response={200: ActorOut, **errors(403, 404, 422)},
    summary="Create or update an actor's memberships",
)
def put_actor(request, ref: RefParam, payload: ActorIn):
    """Unknown scopes are created, each under the next one in the list (the last under the
    key's reach). A scope outside the key's reach is a 403; the reach is added if missing.
    An existing actor outside the reach is a 404, as if it did not exist."""
    principal = request.auth
    actor = actors.put_actor(
        ref, payload.display_name, payload.scopes, principal.api_key, principal
    )
    return actor_out(actor, ref)


@router.get("/{path:ref}", response={200: ActorOut, **errors(404, 422)}, summary="An actor's chain")
def get_actor(request, ref: RefParam):
    principal = request.auth
    actor = actors.read_actor(ref, principal.api_key, principal)
    return actor_out(actor, ref)
