"""API keys: created with their secret shown once, stored only as a hash, revocable."""

import hashlib
import hmac
import secrets
from functools import cache

from django.utils import timezone

from memory_core import prepared
from memory_core.actors import actor_for_key
from memory_core.changes import audited
from memory_core.errors import Forbidden, Invalid
from memory_core.models import ApiKey, Scope
from memory_core.permissions import can_administer

SECRET_PREFIX = "mc_"
PREFIX_CHARS = 10


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def create_api_key(
    name: str, reach: Scope, *, principal, actor_ref: str | None = None
) -> tuple[ApiKey, str]:
    """Returns the key and its clear secret, which is never stored and never shown again.

    With `actor_ref`, the key is bound to that actor (create_api_key --actor): it acts for
    it alone, whatever actor a request names. The ref is named as the new key would name it
    (relative to its reach's tenant, or qualified) and resolved as that key's first call
    would resolve it: an actor outside the reach is a 404, an unknown one is registered
    with the reach (actors.actor_for_key), in the same transaction as the key. The database
    holds the binding inside the reach too (apikey_actor_in_reach).
    """
    name = (name or "").strip()
    with audited(principal, "api_key.create", scope=reach.token) as change:
        if not name or len(name) > 100:
            raise Invalid("a key needs a name of 1-100 characters")
        if not can_administer(principal, reach):
            raise Forbidden(f"you do not administer {reach.token}")
        actor = None
        if actor_ref is not None:
            actor = actor_for_key(actor_ref, ApiKey(reach=reach), principal, register=True)
        while True:
            body = secrets.token_urlsafe(32)
            prefix = body[:PREFIX_CHARS]
            if not ApiKey.objects.filter(prefix=prefix).exists():
                break
        secret = f"{SECRET_PREFIX}{body}"
        key = ApiKey.objects.create(
            name=name,
            prefix=prefix,
            secret_hash=hash_secret(secret),
            reach=reach,
            actor=actor,
            created_by=principal.name,
        )
        bound = actor.ref if actor is not None else None
        change.event("api_key.created", reach, {"api_key": key.uid, "reach": reach.token}, bound)
        change.log(201, actor_ref=bound, detail={"api_key": key.uid})
    key.bound_ref = bound
    return key, secret


def authenticate(secret: str | None) -> ApiKey | None:
    """The live key for a presented secret, or None (missing, unknown, revoked)."""
    if not secret or not secret.startswith(SECRET_PREFIX):
        return None
    body = secret[len(SECRET_PREFIX) :]
    row = prepared.fetch_one(_key_by_prefix(), [body[:PREFIX_CHARS]])
    if row is None:
        return None
    width = prepared.width(ApiKey)
    key = prepared.instance(ApiKey, row[:width])
    if not hmac.compare_digest(key.secret_hash, hash_secret(secret)):
        return None
    key.reach = prepared.instance(Scope, row[width:-1])
    # The stored ref of the actor the key is bound to (None: unbound), read with the key so
    # that holding every request to it costs no query (actors.actor_for_key).
    key.bound_ref = row[-1]
    return key


@cache
def _key_by_prefix() -> str:
    # Every API call starts here: a prepared statement rather than an ORM query.
    return f"""
        SELECT {prepared.columns(ApiKey, "k")}, {prepared.columns(Scope, "s")}, a.ref
        FROM memory_core_apikey k JOIN memory_core_scope s ON s.id = k.reach_id
        LEFT JOIN memory_core_actor a ON a.id = k.actor_id
        WHERE k.prefix = %s AND k.revoked_at IS NULL
    """


def revoke_api_key(key: ApiKey, *, principal) -> ApiKey:
    with audited(principal, "api_key.revoke", scope=key.reach.token) as change:
        if not can_administer(principal, key.reach):
            raise Forbidden(f"you do not administer {key.reach.token}")
        key = ApiKey.objects.select_for_update().get(pk=key.pk)
        if key.revoked_at is None:
            key.revoked_at = timezone.now()
            key.save(update_fields=["revoked_at"])
            change.event("api_key.revoked", key.reach, {"api_key": key.uid})
        change.log(200, detail={"api_key": key.uid})
    return key
