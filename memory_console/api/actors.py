"""PUT/GET /actors/{ref}: an actor's memberships, and so its chain (API.md, "Actors")."""

from ninja import Router

from memory_console.api.schemas import ActorIn, ActorOut, errors
from memory_core import actors, audit

router = Router(tags=["actors"])


def actor_out(actor) -> dict:
    return {
        "ref": actor.ref,
        "display_name": actor.display_name,
        "scopes": list(actors.chain_of(actor)),
    }


@router.put(
    "/{ref}",
    response={200: ActorOut, **errors(400, 403, 404, 422)},
    summary="Create or update an actor's memberships",
)
def put_actor(request, ref: str, payload: ActorIn):
    """Unknown scopes are created, each under the next one in the list (the last under the
    key's reach). A scope outside the key's reach is a 403; the reach is added if missing.
    An existing actor outside the reach is a 404, as if it did not exist."""
    principal = request.auth
    actor = actors.put_actor(
        ref, payload.display_name, payload.scopes, principal.api_key, principal
    )
    return actor_out(actor)


@router.get("/{ref}", response={200: ActorOut, **errors(404, 422)}, summary="An actor's chain")
def get_actor(request, ref: str):
    principal = request.auth
    actor = actors.actor_for_key(ref, principal.api_key, principal)
    audit.record(principal, "actor.get", 200, actor_ref=actor.ref, scope=actor.scope.token)
    return actor_out(actor)
