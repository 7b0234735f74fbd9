"""Scopes (the administration tree), actors and their ordered memberships."""

import pgtrigger
from django.db import models
from django.db.models import Q

from memory_core.models.guards import REFUSED_SQLSTATE
from memory_core.rules.scopes import (
    GLOBAL,
    KIND_PATTERN,
    REF_MAX_CHARS,
    REF_PATTERN,
    SCOPE_MAX_CHARS,
)

# memory_core.rules.scopes.SCOPE_RE without its look-ahead; `scope_tenant_is_one_name` adds the
# rest (a tenant is one name, so `tenant:a/b` is no token).
SCOPE_TOKEN_REGEX = rf"^(global|{KIND_PATTERN}:{REF_PATTERN})$"
ACTOR_REF_REGEX = rf"^{REF_PATTERN}$"

# Names are per tenant (memory_core/rules/names.py): a scope named inside tenant T hangs under
# tenant:T or another scope of T; a tenant hangs under global; a scope outside every tenant
# never hangs under one. memory_core_tenant_of() is names.tenant_of in SQL (migration 0007).
SCOPE_PLACEMENT_SQL = f"""
    DECLARE parent_token text;
    BEGIN
        IF NEW.parent_id IS NULL THEN
            RETURN NEW;
        END IF;
        SELECT token INTO parent_token FROM memory_core_scope WHERE id = NEW.parent_id;
        IF NEW.token LIKE 'tenant:%' THEN
            IF parent_token <> 'global' THEN
                RAISE EXCEPTION 'scope %: a tenant hangs directly under global', NEW.token
                    USING ERRCODE = '{REFUSED_SQLSTATE}';
            END IF;
        ELSIF memory_core_tenant_of(NEW.token)
                IS DISTINCT FROM memory_core_tenant_of(parent_token) THEN
            RAISE EXCEPTION 'scope % cannot hang under % (names are per tenant)',
                NEW.token, parent_token USING ERRCODE = '{REFUSED_SQLSTATE}';
        END IF;
        RETURN NEW;
    END;
"""

# An actor's memberships lie in its own tenant (or, outside every tenant, outside them all).
MEMBERSHIP_TENANT_SQL = f"""
    DECLARE scope_token text; actor_ref text;
    BEGIN
        SELECT token INTO scope_token FROM memory_core_scope WHERE id = NEW.scope_id;
        SELECT ref INTO actor_ref FROM memory_core_actor WHERE id = NEW.actor_id;
        IF scope_token <> 'global' AND memory_core_tenant_of(scope_token)
                IS DISTINCT FROM memory_core_tenant_of('actor:' || actor_ref) THEN
            RAISE EXCEPTION 'actor % cannot be a member of % (names are per tenant)',
                actor_ref, scope_token USING ERRCODE = '{REFUSED_SQLSTATE}';
        END IF;
        RETURN NEW;
    END;
"""


class Scope(models.Model):
    token = models.CharField(max_length=SCOPE_MAX_CHARS, unique=True)
    label = models.CharField(max_length=200, blank=True, default="")
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="children"
    )
    # The ledger stream this scope's events are chained in: the top-level scope under
    # `global` (or `global` itself). Stored so an append needs no walk up the tree.
    stream = models.CharField(max_length=SCOPE_MAX_CHARS)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["token"]
        constraints = [
            # Tokens are opaque strings with one shape everywhere (API, console, CLI).
            models.CheckConstraint(
                condition=Q(token__regex=SCOPE_TOKEN_REGEX), name="scope_token_shape"
            ),
            models.CheckConstraint(
                condition=~Q(token__regex=r"^tenant:.*/"), name="scope_tenant_is_one_name"
            ),
            # Only `global` is a root; everything else hangs somewhere in the tree.
            models.CheckConstraint(
                condition=Q(token=GLOBAL, parent__isnull=True)
                | Q(parent__isnull=False) & ~Q(token=GLOBAL),
                name="scope_only_global_is_root",
            ),
        ]
        triggers = [
            pgtrigger.Trigger(
                name="scope_named_in_its_tenant",
                when=pgtrigger.Before,
                operation=pgtrigger.Insert | pgtrigger.UpdateOf("token", "parent_id"),
                func=SCOPE_PLACEMENT_SQL,
            ),
        ]

    def __str__(self):
        return self.token


class Actor(models.Model):
    # Stored qualified: `acme/u1` in tenant acme, a bare `u1` outside every tenant.
    ref = models.CharField(max_length=REF_MAX_CHARS, unique=True)
    display_name = models.CharField(max_length=200, blank=True, default="")
    scope = models.OneToOneField(Scope, on_delete=models.PROTECT, related_name="actor")
    created_at = models.DateTimeField(auto_now_add=True)
    # Set by an erasure before anything is removed, cleared only by a superuser reopening the
    # ref: while set, every write naming the actor is refused (410), by the services and,
    # for a write that was already past their check, by the database (migration 0022).
    erased_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["ref"]
        constraints = [
            models.CheckConstraint(
                condition=Q(ref__regex=ACTOR_REF_REGEX),
                name="actor_ref_shape",
            ),
        ]

    def __str__(self):
        return self.ref


class Membership(models.Model):
    actor = models.ForeignKey(Actor, on_delete=models.CASCADE, related_name="memberships")
    scope = models.ForeignKey(Scope, on_delete=models.PROTECT, related_name="memberships")
    # Position in the chain after the actor's own scope: 0 is the narrowest membership.
    rank = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["actor", "rank"]
        constraints = [
            # The order of memberships is the whole of precedence: one scope per position.
            models.UniqueConstraint(fields=["actor", "rank"], name="membership_actor_rank_unique"),
            # A scope appears once in a chain, else precedence would be ambiguous.
            models.UniqueConstraint(
                fields=["actor", "scope"], name="membership_actor_scope_unique"
            ),
        ]
        triggers = [
            pgtrigger.Trigger(
                name="membership_in_actor_tenant",
                when=pgtrigger.Before,
                operation=pgtrigger.Insert | pgtrigger.Update,
                func=MEMBERSHIP_TENANT_SQL,
            ),
        ]
