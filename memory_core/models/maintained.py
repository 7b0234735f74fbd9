"""Tables the database keeps for the console's summaries, so a page reads a few rows instead
of aggregating a million. Written only by the triggers declared at the end of this module,
whose functions (maintained.sql and, for the turns per hour, turn_hours.sql, beside this
file) run as the tables' owner (SECURITY DEFINER); the server's role may only read them
(privileges.APP_PRIVILEGES), so no raw SQL of the server can make them disagree with the
memories and turns they summarise.

"Held" is a memory that is not retired. Whether a held memory is live also depends on the
clock (`expires_at`), which no write announces, so the tables hold the held memories and
the reads (memory_core/summaries.py, memory_core/conflicts.py) set the expired ones apart
at read time, on memory_expiry_idx: the figures mean what Memory.objects.live() means.
"""

import pgtrigger
from django.db import models

from memory_core.models.digests import Digest
from memory_core.models.memories import Memory
from memory_core.models.scopes import Actor, Membership


class ScopeCount(models.Model):
    """Held memories at one scope: how many, how many by agents, how many pinned."""

    scope = models.OneToOneField(
        "memory_core.Scope",
        primary_key=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="held_count",
    )
    held = models.IntegerField(default=0)
    agent = models.IntegerField(default=0)
    pinned = models.IntegerField(default=0)


class ChainConflict(models.Model):
    """In one actor's chain, the narrowest held value of a key (narrow) beats a wider held
    value of the same key (wide): one row per actor and beaten value. The conflicts page
    groups them by pair, counting the actors (memory_core/conflicts.py)."""

    pk = models.CompositePrimaryKey("actor_id", "key", "wide_id")
    actor = models.ForeignKey(
        "memory_core.Actor",
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        db_index=False,  # the primary key leads with it
        related_name="+",
    )
    key = models.CharField(max_length=64)
    narrow = models.ForeignKey(
        "memory_core.Memory",
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        db_index=False,
        related_name="+",
    )
    wide = models.ForeignKey(
        "memory_core.Memory",
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        db_index=False,
        related_name="+",
    )
    narrow_scope = models.ForeignKey(
        "memory_core.Scope", on_delete=models.DO_NOTHING, db_constraint=False, related_name="+"
    )
    wide_scope = models.ForeignKey(
        "memory_core.Scope", on_delete=models.DO_NOTHING, db_constraint=False, related_name="+"
    )
    # Positions in the actor's chain: its own scope 0, memberships in order, global 32767.
    narrow_rank = models.IntegerField()
    wide_rank = models.IntegerField()
    authors = models.CharField(max_length=16)  # "agent>human": narrow's author, then wide's
    duplicate = models.BooleanField()  # the same text: a duplicate, not a conflict

    class Meta:
        indexes = [
            # A pair's narrowest ranks are read again from its rows when it loses one.
            models.Index(fields=["narrow", "wide"], name="chainconflict_pair_idx"),
        ]


class ConflictPair(models.Model):
    """One (narrow, wide) pair over every actor: how many ChainConflict rows it has, kept by
    the same triggers as increments (+1 per row added, -1 per row removed, commutative, so
    concurrent writes never lose one), so the superuser's conflicts page reads an index in
    its own order instead of grouping every actor's rows."""

    pk = models.CompositePrimaryKey("narrow_id", "wide_id")
    narrow = models.ForeignKey(
        "memory_core.Memory",
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        db_index=False,  # the primary key leads with it
        related_name="+",
    )
    wide = models.ForeignKey(
        "memory_core.Memory",
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        db_index=False,
        related_name="+",
    )
    key = models.CharField(max_length=64)
    narrow_scope = models.ForeignKey(
        "memory_core.Scope", on_delete=models.DO_NOTHING, db_constraint=False, related_name="+"
    )
    wide_scope = models.ForeignKey(
        "memory_core.Scope", on_delete=models.DO_NOTHING, db_constraint=False, related_name="+"
    )
    authors = models.CharField(max_length=16)
    agent_over_human = models.BooleanField()  # authors == "agent>human": listed first
    duplicate = models.BooleanField()
    actors = models.IntegerField()  # in how many chains
    # The narrowest positions over those chains (the page's order after the key): lowered
    # as rows come, read again from the rows when the pair loses one.
    narrow_rank = models.IntegerField()
    wide_rank = models.IntegerField()

    class Meta:
        indexes = [
            # The conflicts page's order, per kind (conflicts, duplicates).
            models.Index(
                "duplicate",
                models.F("agent_over_human").desc(),
                "key",
                "narrow_rank",
                "wide_rank",
                "narrow",
                "wide",
                name="conflictpair_page_idx",
            ),
        ]


class TenantTurnHour(models.Model):
    """Stored turns of one tenant's actors dated in one hour (UTC), and how many of them left
    pinned memories out (`pinned_omitted > 0`): the dashboard's turns chart and alerts for a
    reader of whole tenants (every reader of `tenant:T` reads every actor of T). `tenant` is
    the actor's (names.ref_tenant), "" for actors outside every tenant."""

    pk = models.CompositePrimaryKey("tenant", "hour")
    tenant = models.CharField(max_length=128)
    hour = models.DateTimeField()
    turns = models.IntegerField(default=0)
    alerts = models.IntegerField(default=0)

    class Meta:
        indexes = [
            # The superuser's window: every tenant's hours since a day, without the tenants.
            models.Index(fields=["hour"], name="tenantturnhour_hour_idx"),
        ]


class ActorTurnHour(models.Model):
    """The same per actor: for a reader whose grants reach some of a tenant's actors and not
    the tenant (a team's administrator, an actor's auditor)."""

    pk = models.CompositePrimaryKey("actor_id", "hour")
    actor = models.ForeignKey(
        "memory_core.Actor",
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        db_index=False,  # the primary key leads with it
        related_name="+",
    )
    hour = models.DateTimeField()
    turns = models.IntegerField(default=0)
    alerts = models.IntegerField(default=0)


# --- the triggers that keep them --------------------------------------------------------------


class Maintains(pgtrigger.Trigger):
    """AFTER … FOR EACH STATEMENT, executing `function` of maintained.sql with the statement's
    transition tables (old_rows, new_rows).

    Declared with pgtrigger, like every trigger of the schema, but executing a function of
    its own rather than the one pgtrigger writes: the summaries' functions run as the owner
    (SECURITY DEFINER), which pgtrigger cannot declare; and maintenance is never something
    to stand aside from, so it does not ask `_pgtrigger_should_ignore` (which, run with the
    owner's rights, would let the server's `SET pgtrigger.ignore` lift it:
    db/trigger_ignore.py). The function pgtrigger installs beside each trigger is never
    executed; it refuses, should anything ever run it."""

    level = pgtrigger.Statement
    when = pgtrigger.After

    def __init__(self, *, function: str, **kwargs):
        self.function = function
        kwargs.setdefault("func", f"RAISE EXCEPTION 'not run: this trigger executes {function}()';")
        super().__init__(**kwargs)

    def render_execute(self, model) -> str:
        return f"{self.function}()"


# What each operation's statement hands its trigger: the rows before, after, or both.
EVENTS = {
    "insert": (pgtrigger.Insert, pgtrigger.Referencing(new="new_rows")),
    "update": (pgtrigger.Update, pgtrigger.Referencing(old="old_rows", new="new_rows")),
    "delete": (pgtrigger.Delete, pgtrigger.Referencing(old="old_rows")),
}


def _maintain(model, name: str, functions: dict[str, str]) -> None:
    """`<name>_on_<event>` on `model`, executing functions[event], for each event given."""
    for event, function in functions.items():
        operation, referencing = EVENTS[event]
        Maintains(
            name=f"{name}_on_{event}",
            operation=operation,
            referencing=referencing,
            function=function,
        ).register(model)


# A held value added, retired, reinstated, pinned or removed: the counts of its scope, and
# its key's conflicts in every chain that holds the scope.
_maintain(
    Memory,
    "summaries",
    {
        "insert": "memory_core_memory_inserted",
        "update": "memory_core_memory_updated",
        "delete": "memory_core_memory_deleted",
    },
)
# An actor registered (or moved to another own scope), or its memberships replaced: every
# key of its chain.
_maintain(Actor, "chain", dict.fromkeys(["insert", "update"], "memory_core_chains_changed"))
_maintain(
    Membership, "chain", dict.fromkeys(["insert", "update", "delete"], "memory_core_chains_changed")
)
# A stored turn written (or, by the owner, changed or removed): its actor's and its tenant's
# hour. The server's role may not delete a turn and no service changes its actor or time,
# but the counts stay exact whatever a statement does (turn_hours.sql).
_maintain(
    Digest,
    "turn_hours",
    {
        "insert": "memory_core_turns_inserted",
        "update": "memory_core_turns_updated",
        "delete": "memory_core_turns_deleted",
    },
)
