"""What the database itself refuses, tried in raw SQL (the ORM is not the only client).

Tried as the server's own role unless a test says otherwise. The append-only triggers are
tried as the tables' owner: the server's role may not even attempt an UPDATE, DELETE or
TRUNCATE there (tests/test_database_roles.py), so the triggers are the wall that stands
against the owner, and the second one against the server.
"""

import importlib

import pytest
from django.db import IntegrityError, InternalError, connection, transaction

from memory_core import writes
from memory_core.ledger import ledger
from memory_core.models import AccessLog, LedgerEvent, Memory, Scope
from tests.roles import as_owner


def _raw(sql, params=()):
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)


def _raw_as_owner(sql, params=()):
    with as_owner():
        _raw(sql, params)


@pytest.fixture
def memory(org, operator):
    return writes.publish(org.acme, "units", "report distances in kilometres", principal=operator)


def test_global_scope_exists_from_the_first_migration(db):
    assert Scope.objects.filter(token="global", parent__isnull=True).exists()


@pytest.mark.parametrize("column, value", [("text", "tampered"), ("key", "other-key")])
def test_memory_text_and_key_cannot_be_updated(memory, column, value):
    with pytest.raises(InternalError, match="Cannot update"):
        _raw(f"UPDATE memory_core_memory SET {column} = %s WHERE id = %s", [value, memory.pk])
    memory.refresh_from_db()
    assert memory.text == "report distances in kilometres" and memory.key == "units"


def test_memory_scope_author_and_origin_cannot_be_updated(memory, org):
    for sql, params in [
        ("UPDATE memory_core_memory SET scope_id = %s WHERE id = %s", [org.globex.pk, memory.pk]),
        ("UPDATE memory_core_memory SET author = 'agent' WHERE id = %s", [memory.pk]),
        ("UPDATE memory_core_memory SET origin_user = 'mallory' WHERE id = %s", [memory.pk]),
    ]:
        with pytest.raises(InternalError):
            _raw(sql, params)


def test_memory_cannot_be_deleted_outside_forget(memory):
    with pytest.raises(InternalError, match="Cannot delete"):
        _raw("DELETE FROM memory_core_memory WHERE id = %s", [memory.pk])
    with pytest.raises(InternalError):
        with transaction.atomic():
            Memory.objects.filter(pk=memory.pk).delete()
    assert Memory.objects.filter(pk=memory.pk).exists()


def test_memory_table_cannot_be_truncated(memory):
    # The test's own transaction holds deferred FK checks, which TRUNCATE would trip over
    # before reaching the trigger; settle them first.
    _raw("SET CONSTRAINTS ALL IMMEDIATE")
    # The trigger refuses even the owner (the server's role may not TRUNCATE at all).
    with pytest.raises(InternalError, match="TRUNCATE refused"):
        _raw_as_owner("TRUNCATE memory_core_memory CASCADE")
    assert Memory.objects.filter(pk=memory.pk).exists()


def test_pinning_is_an_allowed_update(memory):
    _raw("UPDATE memory_core_memory SET pinned = true WHERE id = %s", [memory.pk])
    memory.refresh_from_db()
    assert memory.pinned


def test_second_live_row_for_one_scope_and_key_is_refused(memory, org):
    with pytest.raises(IntegrityError, match="memory_one_live_per_scope_key"):
        _raw(
            """INSERT INTO memory_core_memory (uid, scope_id, key, text, pinned, tags, author,
                   origin_user, lineage, created_at, retired_reason, retired_note, retired_by)
               VALUES ('mem_x', %s, 'units', 'miles', false, '{}', 'human', 'm',
                   gen_random_uuid(), now(), '', '', '')""",
            [org.acme.pk],
        )


def test_multi_line_text_and_malformed_keys_are_refused_by_the_database(org):
    sql = """INSERT INTO memory_core_memory (uid, scope_id, key, text, pinned, tags, author,
                 origin_user, lineage, created_at, retired_reason, retired_note, retired_by)
             VALUES (%s, %s, %s, %s, false, '{}', 'human', 'm', gen_random_uuid(), now(),
                 '', '', '')"""
    with pytest.raises(IntegrityError, match="memory_text_one_line"):
        _raw(sql, ["mem_a", org.acme.pk, "ok-key", "two\nlines"])
    with pytest.raises(IntegrityError, match="memory_key_shape"):
        _raw(sql, ["mem_b", org.acme.pk, "Bad Key", "fine"])


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE memory_core_ledgerevent SET principal = 'mallory'",
        "DELETE FROM memory_core_ledgerevent",
        "TRUNCATE memory_core_ledgerevent",
    ],
)
def test_ledger_is_append_only(memory, sql):
    before = list(LedgerEvent.objects.order_by("id").values_list("id", "principal", "hash"))
    assert before
    with pytest.raises(InternalError):
        _raw_as_owner(sql)
    assert list(LedgerEvent.objects.order_by("id").values_list("id", "principal", "hash")) == before


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE memory_core_accesslog SET outcome = 200",
        "DELETE FROM memory_core_accesslog",
        "TRUNCATE memory_core_accesslog",
    ],
)
def test_access_log_is_append_only(memory, sql):
    count = AccessLog.objects.count()
    assert count
    with pytest.raises(InternalError):
        _raw_as_owner(sql)
    assert AccessLog.objects.count() == count


def test_forked_ledger_append_is_refused(memory):
    last = LedgerEvent.objects.filter(stream="tenant:acme").order_by("-seq").first()
    with pytest.raises(IntegrityError):
        _raw(
            """INSERT INTO memory_core_ledgerevent (stream, seq, kind, scope, principal, payload,
                   created_at, prev_hash, hash)
               VALUES (%s, %s, 'x', 'tenant:acme', 'm', '{}', now(), %s, %s)""",
            ["tenant:acme", last.seq + 5, last.prev_hash, "f" * 64],
        )


def test_memory_search_columns_are_indexed(db):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'memory_core_memory'"
        )
        indexes = dict(cursor.fetchall())
        cursor.execute(
            """SELECT attgenerated FROM pg_attribute
               WHERE attrelid = 'memory_core_memory'::regclass AND attname = 'search'"""
        )
        generated = cursor.fetchone()[0]
    assert generated == "s"  # a STORED generated column
    assert "gin (search)" in indexes["memory_search_gin"].lower()
    assert "gin_trgm_ops" in indexes["memory_text_trgm"]


def test_ledger_payloads_refuse_key_and_text_fields(memory, operator, org):
    with pytest.raises(ValueError, match="not allowed"):
        with transaction.atomic():
            ledger.append("x", org.acme, operator, {"key": "units"})


def test_write_path_tables_carry_no_index_another_index_covers(db):
    """Every index on digest, digestline, memory and the ledger costs each turn or remember
    one more entry per row; those the composite indexes already cover are dropped."""
    lean = importlib.import_module("memory_core.migrations.0006_lean_write_indexes")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = ANY(%s)",
            [
                [
                    "memory_core_digest",
                    "memory_core_digestline",
                    "memory_core_memory",
                    "memory_core_ledgerevent",
                ]
            ],
        )
        present = {row[0] for row in cursor.fetchall()}
    assert not present & set(lean.DROPPED)
    assert {
        "digest_one_per_actor_run",
        "digestline_digest_n_unique",
        "memory_one_live_per_scope_key",
        "memory_scope_recent_idx",
    } <= present
