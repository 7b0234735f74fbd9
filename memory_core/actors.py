"""Actors, their chains, and the scope tree they hang in.

`chain_of` is the only way code learns which scopes apply to an actor; it reads the ordered
memberships and hands them to the pure resolver in `chain.py`.
"""

from functools import cache

from django.db import transaction

from memory_core.changes import audited
from memory_core.db import prepared
from memory_core.db.locks import advisory_xact_lock
from memory_core.errors import Forbidden, Gone, Invalid, NotFound
from memory_core.ledger import access_log, ledger
from memory_core.models import Actor, Membership, Scope
from memory_core.rules.chain import memberships_after_put, resolve_chain
from memory_core.rules.inputs import require, text_problem
from memory_core.rules.names import (
    ForeignName,
    is_valid_ref,
    membership_problem,
    placement_problem,
    qualify_ref,
    qualify_scope,
    ref_tenant,
    tenant_of,
)
from memory_core.rules.scopes import GLOBAL, actor_scope, is_valid_scope


def global_scope() -> Scope:
    return Scope.objects.get(token=GLOBAL)


def chain_of(actor: Actor) -> tuple[str, ...]:
    # Read with the actor by actor_for_key (and set by _register); dropped by
    # _set_memberships.
    tokens = getattr(actor, "membership_tokens", None)
    if tokens is None:
        tokens = actor.memberships.order_by("rank").values_list("scope__token", flat=True)
    return resolve_chain(actor.ref, list(tokens))


def ancestors(scope: Scope) -> list[Scope]:
    """The scope itself and every scope above it, narrowest first (one query)."""
    rows = Scope.objects.raw(
        """
        WITH RECURSIVE up AS (
            SELECT s.*, 0 AS depth FROM memory_core_scope s WHERE s.id = %s
            UNION ALL
            SELECT p.*, up.depth + 1 FROM memory_core_scope p JOIN up ON p.id = up.parent_id
            WHERE up.depth < 64
        )
        SELECT * FROM up ORDER BY depth
        """,
        [scope.id],
    )
    return list(rows)


def is_within(scope: Scope, outer: Scope) -> bool:
    """True when `scope` is `outer` or lies below it in the tree."""
    if outer.token == GLOBAL:
        return True
    return any(s.id == outer.id for s in ancestors(scope))


def stream_for(parent: Scope | None, token: str) -> str:
    if parent is None or parent.token == GLOBAL:
        return token
    return parent.stream


def ensure_scope(token: str, parent: Scope, label: str = "", *, principal) -> tuple[Scope, bool]:
    """The scope `token`, created under `parent` (and ledgered) when it does not exist.

    A scope named inside tenant T that would be created under `global` goes under
    `tenant:T` instead (created too when missing); any other placement across tenants is
    refused (names.placement_problem).
    """
    if not is_valid_scope(token) or token.startswith("actor:"):
        raise Invalid(f"not a scope token: {token!r} (expected kind:id, e.g. team:ops)")
    tenant = tenant_of(token)
    if parent.token == GLOBAL and tenant is not None and token != f"tenant:{tenant}":
        parent, _ = ensure_scope(f"tenant:{tenant}", parent, principal=principal)
    existing = Scope.objects.filter(token=token).first()
    if existing is not None:
        return existing, False
    require(placement_problem(token, parent.token))
    with transaction.atomic():
        scope, created = Scope.objects.get_or_create(
            token=token,
            defaults={"parent": parent, "label": label, "stream": stream_for(parent, token)},
        )
        if created:
            ledger.append("scope.created", scope, principal, {"target": parent.token})
    return scope, created


def validate_ref(ref: str) -> None:
    if not is_valid_ref(ref):
        raise Invalid(
            "actor ref must be 1-128 characters of letters, digits and . _ @ -, "
            "starting with a letter or digit, optionally qualified by its tenant (acme/u1)"
        )


def stored_ref(ref: str, reach: Scope) -> str:
    """The stored (tenant-qualified) ref for `ref` as a key with this reach names it.

    A ref qualified with another tenant is a 404 decided from its spelling alone, so the
    answer never depends on whether that tenant has such an actor (names.qualify_ref)."""
    validate_ref(ref)
    try:
        return qualify_ref(ref, tenant_of(reach.token))
    except ForeignName:
        raise NotFound(f"actor {ref!r} not found", reason="reach") from None


def _loggable(ref) -> str | None:
    return ref if is_valid_ref(ref) else None


def _registration_memberships(ref: str, reach: Scope, principal) -> list[Scope]:
    """[reach] for a tenant's key; for a global key, [] (or [tenant:T] for a ref named
    inside tenant T, which is where its scope must hang)."""
    if reach.token != GLOBAL:
        return [reach]
    tenant = ref_tenant(ref)
    if tenant is None:
        return []
    scope, _ = ensure_scope(f"tenant:{tenant}", reach, principal=principal)
    return [scope]


def _set_memberships(actor: Actor, scopes: list[Scope]) -> None:
    actor.__dict__.pop("membership_tokens", None)
    actor.memberships.all().delete()
    Membership.objects.bulk_create(
        Membership(actor=actor, scope=scope, rank=rank) for rank, scope in enumerate(scopes)
    )
    # The actor's own scope hangs under its narrowest membership, so the tree (used for
    # administration and for the ledger stream) follows the chain.
    parent = scopes[0] if scopes else global_scope()
    own = actor.scope
    own.parent = parent
    own.stream = stream_for(parent, own.token)
    own.save(update_fields=["parent", "stream"])


def _create_actor(ref: str, display_name: str, memberships: list[Scope]) -> Actor:
    parent = memberships[0] if memberships else global_scope()
    own, _ = Scope.objects.get_or_create(
        token=actor_scope(ref),
        defaults={"parent": parent, "stream": stream_for(parent, actor_scope(ref))},
    )
    actor = Actor.objects.create(ref=ref, display_name=display_name or "", scope=own)
    _set_memberships(actor, memberships)
    return actor


def _actor_with_chain(ref: str) -> Actor | None:
    """The actor, its scope and its membership tokens (for chain_of) in one prepared
    statement: every API call looks its actor up."""
    row = prepared.fetch_one(_actor_sql(), [ref])
    if row is None:
        return None
    width = prepared.width(Actor)
    actor = prepared.instance(Actor, row[:width])
    actor.scope = prepared.instance(Scope, row[width:-1])
    actor.membership_tokens = row[-1]
    return actor


@cache
def _actor_sql() -> str:
    return f"""
        SELECT {prepared.columns(Actor, "a")}, {prepared.columns(Scope, "s")},
               ARRAY(
                   SELECT ms.token FROM memory_core_membership mb
                   JOIN memory_core_scope ms ON ms.id = mb.scope_id
                   WHERE mb.actor_id = a.id ORDER BY mb.rank
               )
        FROM memory_core_actor a JOIN memory_core_scope s ON s.id = a.scope_id
        WHERE a.ref = %s
    """


def key_reaches(actor: Actor, reach: Scope) -> bool:
    """An API key acts for an actor whose chain contains its reach scope."""
    return reach.token in chain_of(actor)


def bound_ref(api_key) -> str | None:
    """The stored ref of the one actor a key is bound to (create_api_key --actor), or None.

    keys.authenticate reads it with the key (`bound_ref`), so checking it costs no query."""
    if api_key.actor_id is None:
        return None
    known = getattr(api_key, "bound_ref", None)
    return known if known is not None else api_key.actor.ref


def require_bound_to(api_key, ref: str, named: str) -> None:
    """A key bound to one actor acts for that actor only: any other ref is the 404 of an
    actor outside the reach, decided before anything is looked up."""
    bound = bound_ref(api_key)
    if bound is not None and ref != bound:
        raise NotFound(f"actor {named!r} not found", reason="reach")


def actor_for_key(ref: str, api_key, principal, *, register: bool = False) -> Actor:
    """The actor `ref` as seen by an API key: unknown and out-of-reach are the same 404.

    With register=True (every write: a turn, remember, a message) an actor seen for the
    first time is created with the chain [actor:<ref>, <reach unless global>, global]
    (docs/agents/api.md, "Actors"), and an erased actor is a 410. A key bound to one actor
    reaches that actor alone (and registers nobody: its actor exists).
    """
    named = ref
    # A malformed ref is not copied into the log (it may not even fit its column).
    with access_log.refusals_logged(principal, "actor.lookup", actor_ref=_loggable(named)):
        ref = stored_ref(ref, api_key.reach)
    with access_log.refusals_logged(principal, "actor.lookup", actor_ref=ref):
        require_bound_to(api_key, ref, named)
    actor = _actor_with_chain(ref)
    # A key whose reach is one actor's own scope registers nobody.
    if actor is None and register and not api_key.reach.token.startswith("actor:"):
        actor = _register(ref, api_key.reach, principal)
    if actor is None:
        raise NotFound(f"actor {named!r} not found")
    # Also for an actor another key registered a moment ago: it may lie outside this reach.
    if not key_reaches(actor, api_key.reach):
        with access_log.refusals_logged(principal, "actor.lookup", actor_ref=ref):
            raise NotFound(f"actor {named!r} not found", reason="reach")
    if register:
        with access_log.refusals_logged(principal, "actor.lookup", actor_ref=ref):
            require_not_erased(actor, named)
    return actor


def require_not_erased(actor: Actor, named: str) -> None:
    """A write naming an erased actor is refused until a superuser reopens the ref. (A write
    already past this check when the erasure began is refused by the database: migration
    0022's triggers.)"""
    if actor.erased_at is not None:
        raise Gone(f"actor {named!r} was erased")


def _register(ref: str, reach: Scope, principal) -> Actor:
    """The actor `ref`, registered by a key with this reach unless a concurrent first call
    registered it a moment ago (logged as `actor.register`, 201)."""
    with audited(principal, "actor.register", actor_ref=ref) as change:
        # Two first calls for one new ref: the second waits here, then finds the first's
        # actor (select_for_update locks no row that does not exist yet).
        advisory_xact_lock("actor", ref)
        actor = Actor.objects.select_related("scope").filter(ref=ref).first()
        if actor is not None:
            change.unchanged()
            return actor
        memberships = _registration_memberships(ref, reach, principal)
        actor = _create_actor(ref, "", memberships)
        # As actor_for_key's look-up would have read them: no query for the chain.
        actor.membership_tokens = [scope.token for scope in memberships]
        change.event("actor.registered", actor.scope, {"scopes": list(chain_of(actor))}, ref)
        change.log(201, scope=actor.scope.token)
        return actor


def read_actor(ref: str, api_key, principal) -> Actor:
    """GET /actors/{ref}: the actor as the key may see it, with the read access-logged
    (an unknown or unreachable one is actor_for_key's 404)."""
    actor = actor_for_key(ref, api_key, principal)
    access_log.record(principal, "actor.get", 200, actor_ref=actor.ref, scope=actor.scope.token)
    return actor


def put_actor(ref: str, display_name: str | None, scopes: list[str], api_key, principal) -> Actor:
    """Create or update an actor's memberships (PUT /actors/{ref}).

    A key changes only what lies inside its reach (chain.memberships_after_put): the listed
    scopes replace the actor's memberships inside the reach, the others keep their places,
    an actor named in tenant T keeps `tenant:T`, and the reach is added if missing. Unknown
    scopes are created, each as a child of the next one in the list, the last as a child of
    the reach; a listed scope outside the reach is a 403. A key bound to one actor changes no
    memberships (403): it is what a host hands one agent session, and a session must not
    widen what its person reads.
    """
    named = ref
    reach = api_key.reach
    with access_log.refusals_logged(principal, "actor.put", actor_ref=_loggable(named)):
        ref = stored_ref(ref, reach)
    with access_log.refusals_logged(principal, "actor.put", actor_ref=ref):
        require_bound_to(api_key, ref, named)
    require(text_problem(display_name, "display_name", 200))
    with audited(principal, "actor.put", actor_ref=ref) as change:
        tokens = _clean_membership_tokens(scopes, tenant_of(reach.token))
        require(membership_problem(ref, tokens))
        advisory_xact_lock("actor", ref)
        existing = Actor.objects.select_for_update().filter(ref=ref).first()
        if existing is not None and not key_reaches(existing, reach):
            raise NotFound(f"actor {named!r} not found")
        if reach.token.startswith("actor:") and reach.token != actor_scope(ref):
            raise NotFound(f"actor {named!r} not found")
        if existing is not None:
            require_not_erased(existing, named)
        current = list(chain_of(existing)[1:-1]) if existing is not None else []
        merged = _memberships_after_put(current, tokens, reach, ref)
        if bound_ref(api_key) is not None and merged != current:
            raise Forbidden(
                "this key is bound to one actor: it may set display_name but change no memberships"
            )
        # A reach that is one actor's own scope holds no membership (nor any scope to make).
        if reach.token.startswith("actor:") and merged != current:
            raise Forbidden(
                "this key reaches one actor's own scope: it may set display_name but change "
                "no memberships"
            )
        resolved = _resolve_membership_scopes(merged, tokens, reach, principal)
        if existing is None:
            actor = _create_actor(ref, display_name or "", resolved)
            kind = "actor.registered"
        else:
            actor = existing
            if display_name is not None and display_name != actor.display_name:
                actor.display_name = display_name
                actor.save(update_fields=["display_name"])
            if merged != current:
                _set_memberships(actor, resolved)
            kind = "actor.updated"
        change.event(kind, actor.scope, {"scopes": list(chain_of(actor))}, ref)
        change.log(200, scope=actor.scope.token)
    return actor


def _memberships_after_put(current: list[str], tokens: list[str], reach: Scope, ref: str):
    """The memberships a PUT by a key with this reach leaves (chain.memberships_after_put).

    A listed scope that exists outside the reach is a 403 here, before anything is created."""
    known = {s.token: s for s in Scope.objects.filter(token__in=[*tokens, *current])}
    for token in tokens:
        if token in known and not is_within(known[token], reach):
            raise Forbidden(f"scope {token!r} lies outside this key's reach ({reach.token})")
    requested = list(tokens)
    # The reach is added if missing; a reach that is an actor's own scope is no membership.
    if reach.token != GLOBAL and not reach.token.startswith("actor:"):
        if reach.token not in requested:
            requested.append(reach.token)
    inside = {token for token in current if is_within(known[token], reach)}
    tenant = ref_tenant(ref)
    return memberships_after_put(
        current, requested, inside, keep=f"tenant:{tenant}" if tenant else None
    )


def _clean_membership_tokens(scopes: list[str], tenant: str | None) -> list[str]:
    """The memberships as stored tokens, named relative to the key's tenant. Another
    tenant's token is a 403 from its spelling alone, before any look-up, so it reveals
    nothing about that tenant's scopes and cannot be created under this one."""
    tokens = []
    for token in scopes:
        if not is_valid_scope(token):
            raise Invalid(f"not a scope token: {token!r} (expected kind:id, e.g. team:ops)")
        if token.startswith("actor:") or token == GLOBAL:
            raise Invalid(f"scopes lists memberships only, without actor:… and global: {token!r}")
        try:
            token = qualify_scope(token, tenant)
        except ForeignName:
            raise Forbidden(f"scope {token!r} lies outside this key's reach") from None
        if token in tokens:
            raise Invalid(f"scope {token!r} is listed twice")
        tokens.append(token)
    return tokens


def _resolve_membership_scopes(
    merged: list[str], tokens: list[str], reach: Scope, principal
) -> list[Scope]:
    """The merged memberships as scopes. Unknown listed scopes are created widest first,
    each a child of the next one in the list (the last a child of the reach); the actor's
    own tenant, when kept but missing, under `global`."""
    existing = {s.token: s for s in Scope.objects.filter(token__in=merged)}
    parent = reach
    for token in reversed(tokens):
        scope = existing.get(token)
        if scope is None:
            scope, _ = ensure_scope(token, parent, principal=principal)
            existing[token] = scope
        parent = scope
    for token in merged:
        if token not in existing:
            existing[token], _ = ensure_scope(token, global_scope(), principal=principal)
    return [existing[token] for token in merged]
