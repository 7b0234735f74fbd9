"""Who may do what: console grants, API keys, and the access log of every attempt."""

import pgtrigger
from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.db.models import Q

from memory_core.models.guards import REFUSED_SQLSTATE, Protect, ReadOnly, no_truncate
from memory_core.rules.ids import api_key_id
from memory_core.rules.scopes import REF_MAX_CHARS, SCOPE_MAX_CHARS


class Role(models.TextChoices):
    ADMIN = "admin"
    AUDITOR = "auditor"


class ScopeGrant(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="scope_grants"
    )
    scope = models.ForeignKey("memory_core.Scope", on_delete=models.CASCADE, related_name="grants")
    role = models.CharField(max_length=8, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            # One role per user per scope: granting again changes the role.
            models.UniqueConstraint(fields=["user", "scope"], name="grant_user_scope_unique"),
        ]


# A key bound to one actor reaches that actor only, and only while it lies inside the key's
# reach: the reach is `global`, the actor's own scope, or one of its memberships, exactly the
# scopes of its chain (actors.key_reaches, which also refuses an actor that left the reach
# after the key was made).
APIKEY_ACTOR_IN_REACH_SQL = f"""
    DECLARE reach_token text;
    BEGIN
        IF NEW.actor_id IS NULL THEN
            RETURN NEW;
        END IF;
        SELECT token INTO reach_token FROM memory_core_scope WHERE id = NEW.reach_id;
        IF reach_token = 'global'
            OR EXISTS (SELECT 1 FROM memory_core_actor a
                       WHERE a.id = NEW.actor_id AND a.scope_id = NEW.reach_id)
            OR EXISTS (SELECT 1 FROM memory_core_membership m
                       WHERE m.actor_id = NEW.actor_id AND m.scope_id = NEW.reach_id) THEN
            RETURN NEW;
        END IF;
        RAISE EXCEPTION 'api key %: its actor lies outside its reach %', NEW.uid, reach_token
            USING ERRCODE = '{REFUSED_SQLSTATE}';
    END;
"""


class ApiKey(models.Model):
    uid = models.CharField(max_length=40, unique=True, default=api_key_id, editable=False)
    name = models.CharField(max_length=100)
    # The first characters of the secret, shown in lists and used to find the row.
    prefix = models.CharField(max_length=16, unique=True)
    # sha256 of the secret. Secrets are 256 random bits, so a fast hash is enough;
    # the clear secret is shown once at creation and stored nowhere.
    secret_hash = models.CharField(max_length=64)
    reach = models.ForeignKey(
        "memory_core.Scope", on_delete=models.PROTECT, related_name="api_keys"
    )
    # A key bound to one actor (create_api_key --actor): it acts for that actor only, in the
    # REST API and over MCP, whatever actor a request names. Null: every actor in reach.
    actor = models.ForeignKey(
        "memory_core.Actor",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="api_keys",
    )
    created_by = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # Paused keys authenticate as nothing until resumed; a revoked key stays revoked.
    paused_at = models.DateTimeField(null=True, blank=True)
    # Null: the key never expires. From this instant it authenticates as nothing.
    expires_at = models.DateTimeField(null=True, blank=True)
    # Maintained cheaply: touched by the authenticating statement itself, and only when it
    # is older than keys.LAST_USED_GRANULARITY, so not a write per request.
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(secret_hash__regex=r"^[0-9a-f]{64}$"), name="apikey_secret_is_hash"
            ),
            # An expiry at or before creation would hand out a secret that never worked.
            models.CheckConstraint(
                condition=Q(expires_at__isnull=True) | Q(expires_at__gt=models.F("created_at")),
                name="apikey_expires_after_creation",
            ),
        ]
        triggers = [
            pgtrigger.Trigger(
                name="apikey_actor_in_reach",
                when=pgtrigger.Before,
                operation=pgtrigger.Insert,
                func=APIKEY_ACTOR_IN_REACH_SQL,
            ),
            # What a secret may do is fixed when it is handed out: rebinding a live key to
            # another actor, or widening its reach, would change it behind its holder's back.
            ReadOnly(name="apikey_binding_immutable", fields=["reach", "actor"]),
            # Revocation is final: a revoked key is never un-revoked, paused or resumed, and
            # its expiry is not moved (only last_used_at may still be touched).
            pgtrigger.Trigger(
                name="apikey_revoked_final",
                when=pgtrigger.Before,
                operation=pgtrigger.Update,
                condition=pgtrigger.Condition(
                    'OLD."revoked_at" IS NOT NULL AND ('
                    'NEW."revoked_at" IS DISTINCT FROM OLD."revoked_at"'
                    ' OR NEW."paused_at" IS DISTINCT FROM OLD."paused_at"'
                    ' OR NEW."expires_at" IS DISTINCT FROM OLD."expires_at")'
                ),
                func=f"RAISE EXCEPTION 'api key %: revoked keys stay revoked', OLD.uid"
                f" USING ERRCODE = '{REFUSED_SQLSTATE}';",
            ),
        ]

    def __str__(self):
        return f"{self.name} ({self.prefix}…)"

    @property
    def principal(self) -> str:
        return f"key:{self.prefix}"


class Channel(models.TextChoices):
    API = "api"
    # The MCP endpoint (/mcp/): the same keys, services and rows as the API.
    MCP = "mcp"
    CONSOLE = "console"
    CLI = "cli"


class AccessLog(models.Model):
    created_at = models.DateTimeField(auto_now_add=True)
    channel = models.CharField(max_length=8, choices=Channel.choices)
    principal = models.CharField(max_length=200)
    actor_ref = models.CharField(max_length=REF_MAX_CHARS, null=True, blank=True)
    action = models.CharField(max_length=40)
    # An HTTP-like status: 200/201/204 done, 401/403/404/422 refused.
    outcome = models.PositiveSmallIntegerField()
    scope = models.CharField(max_length=SCOPE_MAX_CHARS, null=True, blank=True)
    memory_ids = ArrayField(models.CharField(max_length=40), default=list, blank=True)
    count = models.PositiveIntegerField(default=0)
    detail = models.JSONField(default=dict, blank=True)
    # The X-Request-ID of the request that wrote the row (memory_console/request_ids.py),
    # also in that request's log lines; null for rows written outside a request.
    request_id = models.CharField(max_length=64, null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["principal", "-id"], name="access_principal_idx"),
            models.Index(fields=["actor_ref", "-id"], name="access_actor_idx"),
            models.Index(fields=["action", "-id"], name="access_action_idx"),
            # An auditor's access page: rows at a readable scope OR about a readable actor;
            # with this beside access_actor_idx the planner can OR two index scans.
            models.Index(fields=["scope", "-id"], name="access_scope_idx"),
            # The refusal count of a recent window reads only that window's refusals.
            models.Index(
                fields=["created_at"],
                condition=Q(outcome__gte=400),
                name="access_refused_recent_idx",
            ),
            models.Index(fields=["created_at"], name="access_created_idx"),
            # Probing shows up as refusals; the access page counts and lists them.
            models.Index(fields=["-id"], condition=Q(outcome__gte=400), name="access_refused_idx"),
            # The memory page lists the access rows about one memory.
            GinIndex(fields=["memory_ids"], name="access_memory_ids_gin"),
        ]
        triggers = [
            Protect(
                name="access_append_only",
                operation=pgtrigger.Update | pgtrigger.Delete,
            ),
            no_truncate("access_no_truncate", "the access log is append-only"),
        ]
