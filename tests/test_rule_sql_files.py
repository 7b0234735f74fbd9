"""The SQL files beside the rules are what the database runs (memory_core/db/sql_files.py).

A .sql file edited with no migration that reloads it fails here, with the operation to add
(a test database loads today's file at every reload, so only the digests can tell). The
summaries' triggers are the ones models/maintained.py declares, run the functions of
maintained.sql as the owner, and no `SET pgtrigger.ignore` lifts them.
"""

import re

import pytest
from django.db import connection
from django.db.migrations.loader import MigrationLoader

from memory_core import writes
from memory_core.db import sql_files
from memory_core.models import Actor, ChainConflict, Digest, Membership, Memory, ScopeCount
from memory_core.models.maintained import Maintains

pytestmark = pytest.mark.django_db

FUNCTION = re.compile(
    r"CREATE OR REPLACE FUNCTION\s+(\w+)\(.*?\bAS \$\$(.*?)\$\$;", re.DOTALL | re.IGNORECASE
)


def _sql_files() -> list[str]:
    return sorted(str(p.relative_to(sql_files.ROOT)) for p in sql_files.ROOT.rglob("*.sql"))


def _maintaining():
    return [
        (model, trigger)
        for model in (Memory, Actor, Membership, Digest)
        for trigger in model._meta.triggers
        if isinstance(trigger, Maintains)
    ]


def _last_reloads() -> dict[str, tuple[str, sql_files.ReloadSQL]]:
    """Each file's last ReloadSQL in the order migrations apply, with its migration."""
    graph = MigrationLoader(None, ignore_no_migrations=True).graph
    plan = [
        node
        for leaf in graph.leaf_nodes()
        if leaf[0] == "memory_core"
        for node in graph.forwards_plan(leaf)
    ]
    last = {}
    for node in dict.fromkeys(plan):
        for operation in graph.nodes[node].operations:
            if isinstance(operation, sql_files.ReloadSQL):
                last[operation.name] = (node[1], operation)
    return last


def test_the_last_reload_of_every_sql_file_names_the_file_as_it_reads_now():
    last = _last_reloads()
    for name in _sql_files():
        wanted = f'ReloadSQL("{name}", "{sql_files.digest(name)}")'
        assert name in last, f"no migration loads {name}: add one with {wanted}"
        migration, operation = last[name]
        assert operation.digest == sql_files.digest(name), (
            f"{name} changed since migration {migration} loaded it: add a migration with {wanted}"
        )


def test_every_function_of_the_sql_files_runs_as_its_file_says():
    names = _sql_files()
    assert {
        "rules/chain.sql",
        "rules/precedence.sql",
        "models/maintained.sql",
        "models/turn_hours.sql",
    } <= set(names)
    for name in names:
        functions = FUNCTION.findall(sql_files.load(name))
        assert functions, f"{name} defines no function"
        for function, body in functions:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT prosrc FROM pg_proc"
                    " WHERE proname = %s AND pronamespace = 'public'::regnamespace",
                    [function],
                )
                loaded = [src for (src,) in cursor.fetchall()]
            assert loaded == [body], (
                f"{function} of {name} is not what the database runs: a migration with "
                f'ReloadSQL("{name}") is missing'
            )


def test_the_summaries_triggers_are_the_declared_ones_running_the_owners_functions():
    declared = {
        (model._meta.db_table, t.get_pgid(model), t.function) for model, t in _maintaining()
    }
    assert len(declared) == 11
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT t.tgrelid::regclass::text, t.tgname, p.proname, p.prosecdef, p.prosrc
               FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
               WHERE NOT t.tgisinternal AND p.proname LIKE 'memory\\_core\\_%'"""
        )
        found = cursor.fetchall()
    assert {(table, name, function) for table, name, function, _, _ in found} == declared
    for _, name, _, definer, source in found:
        assert definer, name
        assert "_pgtrigger_should_ignore" not in source, name
    for model, trigger in _maintaining():
        assert trigger.get_installation_status(model) == ("INSTALLED", True)


def test_naming_the_summaries_triggers_in_pgtrigger_ignore_lifts_nothing(org, operator):
    everything = ",".join(trigger.get_pgid(model) for model, trigger in _maintaining())
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('pgtrigger.ignore', %s, true)", [f"{{{everything}}}"])
    writes.publish(org.acme, "tone", "calm", principal=operator)
    writes.remember(org.u1, "tone", "brisk", principal=operator)
    assert ScopeCount.objects.filter(scope=org.acme, held=1).exists()
    assert ChainConflict.objects.filter(actor=org.u1, key="tone").exists()


@pytest.mark.parametrize("name", ["../settings.py", "rules/precedence.py", "/etc/passwd"])
def test_only_sql_files_of_memory_core_load(name):
    with pytest.raises(ValueError):
        sql_files.load(name)
