"""The bench seed keeps the planner's statistics up with the rows it writes.

The seed is one transaction, which autovacuum never sees; without an ANALYZE of its own rows
the summaries' triggers planned for empty tables, and a 1m seed slowed from minutes to
hours as its table grew (PostgreSQL 18). The speed itself is the bench's to measure; these
hold the schedule and that the statement runs inside a transaction on the real tables.
"""

import pytest
from django.db import connection, transaction

from memory_console.bench.seed import ANALYZED_AS_IT_GROWS, Seeder


class _Recording:
    def __init__(self):
        self.statements = []

    def execute(self, statement, *args):
        self.statements.append(statement)


def _seeder(conn) -> Seeder:
    seeder = Seeder.__new__(Seeder)  # the schedule alone: no tree, no connection of its own
    seeder.conn, seeder.memories, seeder.analyzed_at = conn, 0, 0
    return seeder


def test_the_seed_analyzes_its_tables_each_time_its_memories_double_from_a_thousand():
    conn = _Recording()
    seeder = _seeder(conn)
    analyzed = []
    for written in range(0, 20_000, 250):
        seeder.memories = written
        before = len(conn.statements)
        seeder.analyze_as_it_grows()
        if len(conn.statements) > before:
            analyzed.append(written)
    assert analyzed == [1000, 2000, 4000, 8000, 16000]
    assert all(s == f"ANALYZE {', '.join(ANALYZED_AS_IT_GROWS)}" for s in conn.statements)


@pytest.mark.django_db(transaction=True)
def test_the_seeds_analyze_runs_inside_a_transaction_on_the_tables_it_fills():
    with transaction.atomic(), connection.cursor() as cursor:
        seeder = _seeder(cursor)
        seeder.memories = 1000
        seeder.analyze_as_it_grows()
        assert seeder.analyzed_at == 1000
        cursor.execute(
            "SELECT count(*) FROM pg_class WHERE relname = ANY(%s) AND relkind = 'r'",
            [list(ANALYZED_AS_IT_GROWS)],
        )
        assert cursor.fetchone()[0] == len(ANALYZED_AS_IT_GROWS)
