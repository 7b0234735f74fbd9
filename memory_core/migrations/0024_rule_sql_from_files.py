# Hand-written around the generated AddTrigger operations: the SQL of migration 0016 now
# lives in files beside what it serves, loaded through memory_core/db/sql_files.py:
#
# - rules/chain.sql: the chain as ranks (memory_core_chains) and read backwards
#   (memory_core_chains_holding), new;
# - rules/precedence.sql: memory_core_chain_conflicts, which now reads the chain from
#   memory_core_chains instead of spelling it;
# - models/maintained.sql: the functions that keep the summaries, memory_core_values_changed
#   now finding the chains that hold a scope with memory_core_chains_holding (the same
#   function the conflicts page reads its reach with).
#
# A later change of one of these files is an edit of the file and a migration with one
# ReloadSQL naming the file and its new digest (tests/test_rule_sql_files.py says which).
#
# The eight triggers 0016 made with RunSQL are replaced by the same triggers declared with
# pgtrigger (models/maintained.py), executing the same functions. The migration is one
# transaction and DROP TRIGGER locks each table until it ends, so no write falls between the
# old trigger and the new one: the kept tables stay exact and need no backfill.
#
# Backwards, 0016's functions and triggers are made again as 0016 made them, and the two new
# functions dropped.

import importlib

import pgtrigger.compiler
import pgtrigger.migrations
from django.db import migrations

from memory_core.db.sql_files import ReloadSQL

_0016 = importlib.import_module("memory_core.migrations.0016_maintained_summaries")

# 0016's eight triggers (its backwards SQL drops them first, then its functions).
DROP_0016_TRIGGERS = "\n".join(
    line for line in _0016.DROP.splitlines() if line.startswith("DROP TRIGGER ")
)

# 0016's functions over the reloaded ones (the same signatures), and its triggers.
FUNCTIONS_OF_0016 = _0016.FUNCTIONS.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION")


class Migration(migrations.Migration):

    dependencies = [
        ('memory_core', '0023_guards_hold_for_app_role'),
    ]

    operations = [
        ReloadSQL(
            "rules/chain.sql",
            "ff64f65253efa4e4",
            reverse_sql="DROP FUNCTION memory_core_chains_holding(bigint[]);"
            " DROP FUNCTION memory_core_chains(bigint[]);",
        ),
        ReloadSQL("rules/precedence.sql", "b074178ca58baa65"),
        ReloadSQL("models/maintained.sql", "81b7ba1a3a7184cf"),
        migrations.RunSQL(DROP_0016_TRIGGERS, FUNCTIONS_OF_0016),
        pgtrigger.migrations.AddTrigger(
            model_name='actor',
            trigger=pgtrigger.compiler.Trigger(name='chain_on_insert', sql=pgtrigger.compiler.UpsertTriggerSql(execute='memory_core_chains_changed()', func="RAISE EXCEPTION 'not run: this trigger executes memory_core_chains_changed()';", hash='f817f52a2a67d51bfb9f6af2fd95069e9c4c9500', level='STATEMENT', operation='INSERT', pgid='pgtrigger_chain_on_insert_507c6', referencing='REFERENCING NEW TABLE AS new_rows ', table='memory_core_actor', when='AFTER')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='actor',
            trigger=pgtrigger.compiler.Trigger(name='chain_on_update', sql=pgtrigger.compiler.UpsertTriggerSql(execute='memory_core_chains_changed()', func="RAISE EXCEPTION 'not run: this trigger executes memory_core_chains_changed()';", hash='d5f6f6121f73c2a8a381e95de9b7aa0dda0fa33d', level='STATEMENT', operation='UPDATE', pgid='pgtrigger_chain_on_update_5e897', referencing='REFERENCING OLD TABLE AS old_rows  NEW TABLE AS new_rows ', table='memory_core_actor', when='AFTER')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='membership',
            trigger=pgtrigger.compiler.Trigger(name='chain_on_insert', sql=pgtrigger.compiler.UpsertTriggerSql(execute='memory_core_chains_changed()', func="RAISE EXCEPTION 'not run: this trigger executes memory_core_chains_changed()';", hash='a174c46caf145488f7e14a2d28c90633cc3414f3', level='STATEMENT', operation='INSERT', pgid='pgtrigger_chain_on_insert_4648f', referencing='REFERENCING NEW TABLE AS new_rows ', table='memory_core_membership', when='AFTER')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='membership',
            trigger=pgtrigger.compiler.Trigger(name='chain_on_update', sql=pgtrigger.compiler.UpsertTriggerSql(execute='memory_core_chains_changed()', func="RAISE EXCEPTION 'not run: this trigger executes memory_core_chains_changed()';", hash='4ae71d8b0f59df2e48c18145abd5d3f190f341db', level='STATEMENT', operation='UPDATE', pgid='pgtrigger_chain_on_update_b3ca0', referencing='REFERENCING OLD TABLE AS old_rows  NEW TABLE AS new_rows ', table='memory_core_membership', when='AFTER')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='membership',
            trigger=pgtrigger.compiler.Trigger(name='chain_on_delete', sql=pgtrigger.compiler.UpsertTriggerSql(execute='memory_core_chains_changed()', func="RAISE EXCEPTION 'not run: this trigger executes memory_core_chains_changed()';", hash='9c98be9b28e1c3d19be9d03dcc424449ef6b89c0', level='STATEMENT', operation='DELETE', pgid='pgtrigger_chain_on_delete_04f08', referencing='REFERENCING OLD TABLE AS old_rows ', table='memory_core_membership', when='AFTER')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='memory',
            trigger=pgtrigger.compiler.Trigger(name='summaries_on_insert', sql=pgtrigger.compiler.UpsertTriggerSql(execute='memory_core_memory_inserted()', func="RAISE EXCEPTION 'not run: this trigger executes memory_core_memory_inserted()';", hash='e571d609fa9157db2b4858df5ac2415efdad198a', level='STATEMENT', operation='INSERT', pgid='pgtrigger_summaries_on_insert_eb4a1', referencing='REFERENCING NEW TABLE AS new_rows ', table='memory_core_memory', when='AFTER')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='memory',
            trigger=pgtrigger.compiler.Trigger(name='summaries_on_update', sql=pgtrigger.compiler.UpsertTriggerSql(execute='memory_core_memory_updated()', func="RAISE EXCEPTION 'not run: this trigger executes memory_core_memory_updated()';", hash='ac0e9ef965e88d26a9baf76a4b996c8110f4edb8', level='STATEMENT', operation='UPDATE', pgid='pgtrigger_summaries_on_update_740d2', referencing='REFERENCING OLD TABLE AS old_rows  NEW TABLE AS new_rows ', table='memory_core_memory', when='AFTER')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='memory',
            trigger=pgtrigger.compiler.Trigger(name='summaries_on_delete', sql=pgtrigger.compiler.UpsertTriggerSql(execute='memory_core_memory_deleted()', func="RAISE EXCEPTION 'not run: this trigger executes memory_core_memory_deleted()';", hash='fa82dff256cd9175e19fb241edceb3794158759c', level='STATEMENT', operation='DELETE', pgid='pgtrigger_summaries_on_delete_ec73f', referencing='REFERENCING OLD TABLE AS old_rows ', table='memory_core_memory', when='AFTER')),
        ),
    ]
