"""The bench seed keeps the planner's statistics up with the rows it writes.

The seed is one transaction, which autovacuum never sees; without an ANALYZE of its own rows
the summaries' triggers planned for empty tables, and a 1m seed slowed from minutes to
hours as its table grew (PostgreSQL 18). The speed itself is the bench's to measure; these
hold the schedule, and that the statement analyzes every table it names inside a
transaction, as the seed's role (the owner) runs it.
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
def test_the_seeds_analyze_skips_no_table_inside_a_transaction_as_the_owner():
    # The suite's connection is the owner acting as the server's role (tests/roles.py); the
    # seed connects as the owner. A role that may not analyze a table gets a notice and the
    # table is skipped, so the notices are what this checks.
    notices = []

    def heard(diagnostic):
        notices.append(diagnostic.message_primary)

    connection.ensure_connection()
    connection.connection.add_notice_handler(heard)
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL ROLE NONE")
            cursor.execute("SELECT current_user = session_user")
            assert cursor.fetchone()[0]
            seeder = _seeder(cursor)
            seeder.memories = 1000
            seeder.analyze_as_it_grows()
            assert seeder.analyzed_at == 1000
            cursor.execute(
                "SELECT count(*) FROM pg_class WHERE relname = ANY(%s) AND relkind = 'r'"
                " AND reltuples >= 0",
                [list(ANALYZED_AS_IT_GROWS)],
            )
            assert cursor.fetchone()[0] == len(ANALYZED_AS_IT_GROWS)
            # The statistics go with the transaction: the suite's other tests keep planning
            # as they did.
            transaction.set_rollback(True)
    finally:
        # The connection goes back to the pool: it does not keep this test's handler.
        connection.connection.remove_notice_handler(heard)
    assert notices == []
