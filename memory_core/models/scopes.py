"""Scopes (the administration tree), actors and their ordered memberships."""

from django.db import models
from django.db.models import Q

GLOBAL = "global"

SCOPE_TOKEN_REGEX = r"^(global|[a-z][a-z0-9_-]{0,31}:[A-Za-z0-9][A-Za-z0-9._@-]{0,127})$"


class ScopeQuerySet(models.QuerySet):
    def tokens(self, tokens):
        return self.filter(token__in=list(tokens))


class Scope(models.Model):
    token = models.CharField(max_length=161, unique=True)
    label = models.CharField(max_length=200, blank=True, default="")
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="children"
    )
    # The ledger stream this scope's events are chained in: the top-level scope under
    # `global` (or `global` itself). Stored so an append needs no walk up the tree.
    stream = models.CharField(max_length=161)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ScopeQuerySet.as_manager()

    class Meta:
        ordering = ["token"]
        constraints = [
            # Tokens are opaque strings with one shape everywhere (API, console, CLI).
            models.CheckConstraint(
                condition=Q(token__regex=SCOPE_TOKEN_REGEX), name="scope_token_shape"
            ),
            # Only `global` is a root; everything else hangs somewhere in the tree.
            models.CheckConstraint(
                condition=Q(token=GLOBAL, parent__isnull=True)
                | Q(parent__isnull=False) & ~Q(token=GLOBAL),
                name="scope_only_global_is_root",
            ),
        ]

    def __str__(self):
        return self.token

    @property
    def kind(self) -> str:
        return self.token.split(":", 1)[0] if ":" in self.token else self.token

    @property
    def is_global(self) -> bool:
        return self.token == GLOBAL


class Actor(models.Model):
    ref = models.CharField(max_length=128, unique=True)
    display_name = models.CharField(max_length=200, blank=True, default="")
    scope = models.OneToOneField(Scope, on_delete=models.PROTECT, related_name="actor")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["ref"]
        constraints = [
            models.CheckConstraint(
                condition=Q(ref__regex=r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$"),
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
