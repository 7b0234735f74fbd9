"""API keys: created with their secret shown once, stored only as a hash, revocable."""

import hashlib
import hmac
import secrets
from functools import cache

from django.utils import timezone

from memory_core import prepared
from memory_core.changes import audited
from memory_core.errors import Forbidden, Invalid
from memory_core.models import ApiKey, Scope
from memory_core.permissions import can_administer

SECRET_PREFIX = "mc_"
PREFIX_CHARS = 10


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def create_api_key(name: str, reach: Scope, *, principal) -> tuple[ApiKey, str]:
    """Returns the key and its clear secret, which is never stored and never shown again."""
    name = (name or "").strip()
    with audited(principal, "api_key.create", scope=reach.token) as change:
        if not name or len(name) > 100:
            raise Invalid("a key needs a name of 1-100 characters")
        if not can_administer(principal, reach):
            raise Forbidden(f"you do not administer {reach.token}")
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
            created_by=principal.name,
        )
        change.event("api_key.created", reach, {"api_key": key.uid, "reach": reach.token})
        change.log(201, detail={"api_key": key.uid})
    return key, secret


def authenticate(secret: str | None) -> ApiKey | None:
    """The live key for a presented secret, or None (missing, unknown, revoked)."""
    if not secret or not secret.startswith(SECRET_PREFIX):
        return None
    body = secret[len(SECRET_PREFIX) :]
    row = prepared.fetch_one(_key_by_prefix(), [body[:PREFIX_CHARS]])
    if row is None:
        return None
    key = prepared.instance(ApiKey, row[: prepared.width(ApiKey)])
    if not hmac.compare_digest(key.secret_hash, hash_secret(secret)):
        return None
    key.reach = prepared.instance(Scope, row[prepared.width(ApiKey) :])
    return key


@cache
def _key_by_prefix() -> str:
    # Every API call starts here: a prepared statement rather than an ORM query.
    return f"""
        SELECT {prepared.columns(ApiKey, "k")}, {prepared.columns(Scope, "s")}
        FROM memory_core_apikey k JOIN memory_core_scope s ON s.id = k.reach_id
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
