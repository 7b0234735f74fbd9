"""What PostgreSQL walks for a turn's selection (applied.SELECTED_IN_CHAIN): the chain's live
rows come from memory_one_live_per_scope_key alone, and only the kept keys' rows from the
table."""

import pytest
from django.db import connection

from memory_core import applied, writes
from memory_core.actors import chain_of

pytestmark = pytest.mark.django_db


def _plan(sql: str, params: dict) -> str:
    with connection.cursor() as cursor:
        # Inside the test's transaction only: a sequential scan must not even be tempting.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN " + sql, params)
        return "\n".join(row[0] for row in cursor.fetchall())


def test_a_turns_selection_reads_the_chain_from_the_live_index_alone(org, operator):
    for n in range(40):
        writes.publish(org.acme, f"k-{n}", f"fact number {n}", principal=operator)
    with connection.cursor() as cursor:
        # Statistics of the rows just written, not of whatever earlier tests left: with a
        # table the planner believes empty, any index on scope_id looks as good.
        # ANALYZE is the owner's (the tests' sessions act as the app role, which it refuses
        # with a mere warning).
        cursor.execute("SET LOCAL ROLE memory_owner")
        # The scope pages' index also leads with scope_id; on a test's few fresh rows the
        # planner prices both alike (which won depended on what earlier tests left), so it
        # goes for this transaction: what is checked is that the live index serves the read.
        cursor.execute("DROP INDEX memory_scope_recent_idx")
        cursor.execute("ANALYZE memory_core_memory, memory_core_scope")
        cursor.execute("SET LOCAL ROLE memory_app")
    plan = _plan(applied.SELECTED_IN_CHAIN, {"chain": list(chain_of(org.u1)), "room": 5})
    live = plan[plan.index("CTE live") : plan.index("CTE keyed")]
    assert "Scan using memory_one_live_per_scope_key" in live, plan
    assert "Seq Scan on memory_core_memory" not in live, plan


def test_the_live_index_carries_every_column_the_selection_reads_of_the_chain():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = %s",
            ["memory_one_live_per_scope_key"],
        )
        (indexdef,) = cursor.fetchone()
    assert "(scope_id, key) INCLUDE (pinned, created_at, expires_at, id)" in indexdef
    assert "WHERE (retired_at IS NULL)" in indexdef
