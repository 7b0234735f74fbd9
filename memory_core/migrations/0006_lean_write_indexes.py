"""Drop indexes that other indexes already cover, from the tables every turn and every
remember writes to (each index is one more entry per row written):

- the single-column foreign-key indexes on digest.actor_id, digestline.digest_id and
  memory.scope_id, each the leading column of a named composite index;
- the `varchar_pattern_ops` twins Django adds beside unique CharFields, which serve only
  LIKE 'prefix%' on memory.uid, digest.uid and ledgerevent.hash; nothing queries them so.

Written as SQL with the state change beside it, so the indexes dropped are exactly these
whatever the database's introspection reports.
"""

import django.db.models.deletion
from django.db import migrations, models

DROPPED = {
    "memory_core_digest_actor_id_4590bca3": "memory_core_digest (actor_id)",
    "memory_core_digestline_digest_id_3ed5214d": "memory_core_digestline (digest_id)",
    "memory_core_memory_scope_id_c95e7ea7": "memory_core_memory (scope_id)",
    "memory_core_digest_uid_f977d014_like": "memory_core_digest (uid varchar_pattern_ops)",
    "memory_core_memory_uid_9a00b46a_like": "memory_core_memory (uid varchar_pattern_ops)",
    "memory_core_ledgerevent_hash_ac359a46_like": (
        "memory_core_ledgerevent (hash varchar_pattern_ops)"
    ),
}


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0005_ledger_hash_in_sql")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    f"DROP INDEX IF EXISTS {name};",
                    f"CREATE INDEX IF NOT EXISTS {name} ON {target};",
                )
                for name, target in DROPPED.items()
            ],
            state_operations=[
                migrations.AlterField(
                    model_name="digest",
                    name="actor",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="digests",
                        to="memory_core.actor",
                    ),
                ),
                migrations.AlterField(
                    model_name="digestline",
                    name="digest",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="lines",
                        to="memory_core.digest",
                    ),
                ),
                migrations.AlterField(
                    model_name="memory",
                    name="scope",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="memories",
                        to="memory_core.scope",
                    ),
                ),
            ],
        )
    ]
