# Hand-written around the generated operations: the turns per hour the dashboard reads
# (models/maintained.py, TenantTurnHour and ActorTurnHour), kept by statement-level
# triggers on memory_core_digest executing the owner's functions of models/turn_hours.sql,
# as the other maintained summaries are.
#
# The triggers are made before the backfill, in the migration's one transaction: CREATE
# TRIGGER locks the digest table against writes until the migration commits, so the
# backfill counts exactly the turns committed before it and every later turn goes through
# the triggers; none is counted twice or missed.
#
# Backwards: the triggers, the functions and the tables go.

import django.db.models.deletion
import pgtrigger.compiler
import pgtrigger.migrations
from django.db import migrations, models

from memory_core.db.sql_files import ReloadSQL

BACKFILL = """
INSERT INTO memory_core_actorturnhour (actor_id, hour, turns, alerts)
SELECT d.actor_id, date_trunc('hour', d.created_at, 'UTC'), count(*),
       count(*) FILTER (WHERE d.pinned_omitted > 0)
FROM memory_core_digest d
GROUP BY 1, 2;
INSERT INTO memory_core_tenantturnhour (tenant, hour, turns, alerts)
SELECT coalesce(memory_core_tenant_of('actor:' || a.ref), ''), h.hour, sum(h.turns),
       sum(h.alerts)
FROM memory_core_actorturnhour h JOIN memory_core_actor a ON a.id = h.actor_id
GROUP BY 1, 2;
"""

DROP_FUNCTIONS = """
DROP FUNCTION memory_core_turns_inserted();
DROP FUNCTION memory_core_turns_updated();
DROP FUNCTION memory_core_turns_deleted();
DROP FUNCTION memory_core_count_turns(bigint[], timestamptz[], int[], int[]);
"""


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0025_merge")]

    operations = [
        migrations.CreateModel(
            name="ActorTurnHour",
            fields=[
                ("pk", models.CompositePrimaryKey("actor_id", "hour", blank=True, editable=False, primary_key=True, serialize=False)),
                ("hour", models.DateTimeField()),
                ("turns", models.IntegerField(default=0)),
                ("alerts", models.IntegerField(default=0)),
                ("actor", models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.DO_NOTHING, related_name="+", to="memory_core.actor")),
            ],
        ),
        migrations.CreateModel(
            name="TenantTurnHour",
            fields=[
                ("pk", models.CompositePrimaryKey("tenant", "hour", blank=True, editable=False, primary_key=True, serialize=False)),
                ("tenant", models.CharField(max_length=128)),
                ("hour", models.DateTimeField()),
                ("turns", models.IntegerField(default=0)),
                ("alerts", models.IntegerField(default=0)),
            ],
        ),
        migrations.AddIndex(
            model_name="tenantturnhour",
            index=models.Index(fields=["hour"], name="tenantturnhour_hour_idx"),
        ),
        ReloadSQL("models/turn_hours.sql", "5487274151b533a9", reverse_sql=DROP_FUNCTIONS),
        pgtrigger.migrations.AddTrigger(
            model_name="digest",
            trigger=pgtrigger.compiler.Trigger(name="turn_hours_on_insert", sql=pgtrigger.compiler.UpsertTriggerSql(execute="memory_core_turns_inserted()", func="RAISE EXCEPTION 'not run: this trigger executes memory_core_turns_inserted()';", hash="3be2b02d73f70b0e26d49ff299008abc83d0f42f", level="STATEMENT", operation="INSERT", pgid="pgtrigger_turn_hours_on_insert_470bc", referencing="REFERENCING NEW TABLE AS new_rows ", table="memory_core_digest", when="AFTER")),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="digest",
            trigger=pgtrigger.compiler.Trigger(name="turn_hours_on_update", sql=pgtrigger.compiler.UpsertTriggerSql(execute="memory_core_turns_updated()", func="RAISE EXCEPTION 'not run: this trigger executes memory_core_turns_updated()';", hash="4d9c261c3880214e4818776a5a443b686ed8b5f5", level="STATEMENT", operation="UPDATE", pgid="pgtrigger_turn_hours_on_update_c80cd", referencing="REFERENCING OLD TABLE AS old_rows  NEW TABLE AS new_rows ", table="memory_core_digest", when="AFTER")),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="digest",
            trigger=pgtrigger.compiler.Trigger(name="turn_hours_on_delete", sql=pgtrigger.compiler.UpsertTriggerSql(execute="memory_core_turns_deleted()", func="RAISE EXCEPTION 'not run: this trigger executes memory_core_turns_deleted()';", hash="a255b63689d4f98076b5161e4ff6861fd556f3a8", level="STATEMENT", operation="DELETE", pgid="pgtrigger_turn_hours_on_delete_8d938", referencing="REFERENCING OLD TABLE AS old_rows ", table="memory_core_digest", when="AFTER")),
        ),
        migrations.RunSQL(BACKFILL, migrations.RunSQL.noop),
    ]
