"""API keys: created with their secret shown once, stored only as a hash; paused, resumed,
expired or revoked. A key that is not live (paused, past its expiry, revoked) authenticates
as nothing, so a caller gets the same 401 as for a key that never existed."""

import hashlib
import hmac
import secrets
from datetime import datetime, timedelta
from functools import cache

from django.utils import timezone

from memory_core.accounts.permissions import can_administer
from memory_core.actors import actor_for_key, require_not_erased
from memory_core.changes import audited
from memory_core.db import prepared
from memory_core.errors import Forbidden, Invalid
from memory_core.models import ApiKey, Scope

SECRET_PREFIX = "mc_"
PREFIX_CHARS = 10
# last_used_at is "used within the last five minutes" precise: a busy key is written at
# most once per this interval, not once per request.
LAST_USED_GRANULARITY = timedelta(minutes=5)


class KeyState:
    LIVE = "live"
    PAUSED = "paused"
    EXPIRED = "expired"
    REVOKED = "revoked"


def state_of(key: ApiKey, now: datetime | None = None) -> str:
    """The key's status as the keys page shows it; revoked wins over paused over expired."""
    if key.revoked_at is not None:
        return KeyState.REVOKED
    if key.paused_at is not None:
        return KeyState.PAUSED
    if key.expires_at is not None and key.expires_at <= (now or timezone.now()):
        return KeyState.EXPIRED
    return KeyState.LIVE


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def new_secret() -> tuple[str, str, str]:
    """A fresh key's clear secret, the prefix it is looked up by, and the hash stored of it
    (the bench's own keys are made from it too)."""
    body = secrets.token_urlsafe(32)
    secret = f"{SECRET_PREFIX}{body}"
    return secret, body[:PREFIX_CHARS], hash_secret(secret)


def create_api_key(
    name: str,
    reach: Scope,
    *,
    principal,
    actor_ref: str | None = None,
    register_actor: bool = True,
    expires_at: datetime | None = None,
) -> tuple[ApiKey, str]:
    """Returns the key and its clear secret, which is never stored and never shown again.

    With `actor_ref`, the key is bound to that actor (create_api_key --actor): it acts for
    it alone, whatever actor a request names. The ref is named as the new key would name it
    (relative to its reach's tenant, or qualified) and resolved as that key's first call
    would resolve it: an actor outside the reach is a 404, an unknown one is registered
    with the reach (actors.actor_for_key), in the same transaction as the key, unless
    `register_actor` is False (the console: a slip of the keyboard must not create a
    person), when it is a 404 too. An erased actor is refused (410) either way. The
    database holds the binding inside the reach too (apikey_actor_in_reach).

    With `expires_at`, the key authenticates as nothing from that instant on; it must lie
    in the future (the database refuses one at or before creation).
    """
    name = (name or "").strip()
    with audited(principal, "api_key.create", scope=reach.token) as change:
        if not name or len(name) > 100:
            raise Invalid("a key needs a name of 1-100 characters")
        if expires_at is not None and expires_at <= timezone.now():
            raise Invalid("a key's expiry must lie in the future")
        if not can_administer(principal, reach):
            raise Forbidden(f"you do not administer {reach.token}")
        actor = None
        if actor_ref is not None:
            actor = actor_for_key(
                actor_ref, ApiKey(reach=reach), principal, register=register_actor
            )
            require_not_erased(actor, actor_ref)  # (a registering look-up checked already)
        while True:
            secret, prefix, secret_hash = new_secret()
            if not ApiKey.objects.filter(prefix=prefix).exists():
                break
        key = ApiKey.objects.create(
            name=name,
            prefix=prefix,
            secret_hash=secret_hash,
            reach=reach,
            actor=actor,
            created_by=principal.name,
            expires_at=expires_at,
        )
        bound = actor.ref if actor is not None else None
        payload = {"api_key": key.uid, "reach": reach.token}
        if expires_at is not None:
            payload["expires_at"] = expires_at.isoformat()
        change.event("api_key.created", reach, payload, bound)
        change.log(201, actor_ref=bound, detail={"api_key": key.uid})
    key.bound_ref = bound
    return key, secret


def authenticate(secret: str | None) -> ApiKey | None:
    """The live key for a presented secret, or None (missing, unknown, revoked, paused,
    expired). The same statement touches the key's last_used_at when it is older than
    LAST_USED_GRANULARITY, so keeping it costs no extra statement per request."""
    if not secret or not secret.startswith(SECRET_PREFIX):
        return None
    body = secret[len(SECRET_PREFIX) :]
    prefix = body[:PREFIX_CHARS]
    row = prepared.fetch_one(_key_by_prefix(), [prefix, hash_secret(secret), prefix])
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
    # Every API call starts here: a prepared statement rather than an ORM query. The
    # `touched` update runs in the same statement (a data-modifying CTE runs whether or not
    # it is read), only for the right secret (a prefix is shown on the keys page, so it
    # alone must not move the time) and only once per granularity: in the common case it
    # matches no row and writes nothing. The SELECT sees the row as it was before.
    # statement_timestamp(), not now(): in a longer transaction now() is its start.
    seconds = int(LAST_USED_GRANULARITY.total_seconds())
    return f"""
        WITH touched AS (
            UPDATE memory_core_apikey SET last_used_at = statement_timestamp()
            WHERE prefix = %s AND secret_hash = %s
              AND revoked_at IS NULL AND paused_at IS NULL
              AND (expires_at IS NULL OR expires_at > statement_timestamp())
              AND (last_used_at IS NULL
                   OR last_used_at < statement_timestamp() - interval '{seconds} seconds')
            RETURNING 1
        )
        SELECT {prepared.columns(ApiKey, "k")}, {prepared.columns(Scope, "s")}, a.ref
        FROM memory_core_apikey k JOIN memory_core_scope s ON s.id = k.reach_id
        LEFT JOIN memory_core_actor a ON a.id = k.actor_id
        WHERE k.prefix = %s AND k.revoked_at IS NULL AND k.paused_at IS NULL
          AND (k.expires_at IS NULL OR k.expires_at > statement_timestamp())
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


def pause_api_key(key: ApiKey, *, principal) -> ApiKey:
    """Stop a key authenticating until it is resumed; a revoked key cannot be paused."""
    return _set_paused(key, True, principal=principal)


def resume_api_key(key: ApiKey, *, principal) -> ApiKey:
    """Let a paused key authenticate again; a revoked key stays revoked."""
    return _set_paused(key, False, principal=principal)


def _set_paused(key: ApiKey, paused: bool, *, principal) -> ApiKey:
    action = "api_key.pause" if paused else "api_key.resume"
    with audited(principal, action, scope=key.reach.token) as change:
        if not can_administer(principal, key.reach):
            raise Forbidden(f"you do not administer {key.reach.token}")
        key = ApiKey.objects.select_for_update().get(pk=key.pk)
        if key.revoked_at is not None:
            raise Invalid("this key is revoked: revocation cannot be undone")
        if (key.paused_at is not None) == paused:
            change.unchanged()  # already so: a second click, or another administrator
            return key
        key.paused_at = timezone.now() if paused else None
        key.save(update_fields=["paused_at"])
        change.event(
            "api_key.paused" if paused else "api_key.resumed", key.reach, {"api_key": key.uid}
        )
        change.log(200, detail={"api_key": key.uid})
    return key
