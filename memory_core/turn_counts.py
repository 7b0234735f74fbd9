"""Stored turns per hour, from the counts the database keeps (memory_core_tenantturnhour and
memory_core_actorturnhour: the triggers of models/maintained.py run the functions of
models/turn_hours.sql in the transaction of every statement that writes a turn), so a
reader's turns of the last days cost a few hundred rows, not a count of every turn.

A turn is readable when its actor's own scope is (the console's digests_for_reader). A
grant reaches a scope and everything below it, and every actor of tenant T hangs below
`tenant:T`, so a reader of `tenant:T` reads every actor of T, and a reader of `global`
every actor there is: those readers add up whole tenants' rows. The actors a reader reaches
without their tenant (a team's administrator, an actor's auditor) add up their own rows.
"""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection

from memory_core.rules.names import ref_tenant, tenant_of
from memory_core.rules.scopes import GLOBAL, TENANT_KIND


@dataclass(frozen=True)
class TurnReach:
    """Whose turns: every actor's, or those of whole tenants ("" for the actors outside
    every tenant) and of single actors (by ref)."""

    everything: bool
    tenants: frozenset[str] = frozenset()
    actor_refs: frozenset[str] = frozenset()


def turn_reach(tokens, actor_refs) -> TurnReach:
    """The TurnReach of a reader of the scopes `tokens`, whose own-scope actors are
    `actor_refs` (the console's AuditReach): tenants whole where the reader reads the
    tenant's scope, each other actor by itself."""
    if GLOBAL in tokens:
        return TurnReach(everything=True)
    tenants = frozenset(
        name
        for name in (tenant_of(t) for t in tokens if t.startswith(f"{TENANT_KIND}:"))
        if name is not None
    )
    # An actor outside every tenant is reached whole only through `global`.
    alone = frozenset(ref for ref in actor_refs if ref_tenant(ref) not in tenants)
    return TurnReach(everything=False, tenants=tenants, actor_refs=alone)


_TENANTS_ALL = "SELECT hour, turns, alerts FROM memory_core_tenantturnhour WHERE hour >= %s"
_TENANTS = (
    "SELECT hour, turns, alerts FROM memory_core_tenantturnhour"
    " WHERE tenant = ANY(%s::text[]) AND hour >= %s"
)
_ACTORS = (
    "SELECT h.hour, h.turns, h.alerts FROM memory_core_actorturnhour h"
    " JOIN memory_core_actor a ON a.id = h.actor_id"
    " WHERE a.ref = ANY(%s::text[]) AND h.hour >= %s"
)


def hours_since(since: datetime, reach: TurnReach) -> list[tuple[datetime, int, int]]:
    """[(hour, turns, alerts)] of every hour starting at or after `since` that holds a
    turn in `reach`, oldest first; `alerts` are the turns that left pinned memories out.
    An hour is UTC's (date_trunc('hour', created_at, 'UTC')), so `since` should start one."""
    parts: list[str] = []
    params: list[Any] = []
    if reach.everything:
        parts.append(_TENANTS_ALL)
        params.append(since)
    else:
        if reach.tenants:
            parts.append(_TENANTS)
            params += [sorted(reach.tenants), since]
        if reach.actor_refs:
            parts.append(_ACTORS)
            params += [sorted(reach.actor_refs), since]
    if not parts:
        return []
    union = " UNION ALL ".join(parts)
    sql = f"SELECT hour, sum(turns), sum(alerts) FROM ({union}) x GROUP BY hour ORDER BY hour"
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [(hour, int(turns), int(alerts)) for hour, turns, alerts in cursor.fetchall()]
