"""POST /turns: what the agent is given at the start of a turn (docs/agents/api.md, "Turns")."""

from ninja import Router

from memory_console import metrics
from memory_console.api.bodies import sent_as_is
from memory_console.api.schemas import TurnIn, TurnOut, errors
from memory_core import actors, turns

router = Router(tags=["turns"])


@router.post(
    "",
    response={200: TurnOut, **errors(404, 422)},
    summary="Resolve a turn: the prompt block, its entries and lines",
)
def take_turn(request, payload: TurnIn):
    """The first request for (actor, run_id) composes and stores the digest; a repeat returns
    the stored one unchanged. An actor seen for the first time is registered with the chain
    `[actor:<tenant>/<ref>, <key's reach unless global>, global]`; a key whose reach lies in
    tenant T names actors relative to T (`u1` is `T/u1`)."""
    principal = request.auth
    actor = actors.actor_for_key(payload.actor, principal.api_key, principal, register=True)
    turn = turns.resolve_turn(
        actor,
        payload.run_id,
        principal=principal,
        thread_id=payload.thread_id,
        query=payload.query,
        max_memories=payload.max_memories,
    )
    body = turn.body()
    metrics.observe_turn(turn.stats)
    # Echo the actor as sent (`u1`), whether this turn was composed now or replayed.
    body["actor"] = payload.actor
    return sent_as_is(body)
