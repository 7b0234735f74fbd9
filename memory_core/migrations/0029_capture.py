# Capture (memory_core/capture/, docs/agents/capture.md): the queue of threads waiting for an
# extraction (claimed with FOR UPDATE SKIP LOCKED and a lease), the append-only record of each
# extraction (ids and counts only; the newest completed one per thread is its watermark, and
# extraction_once_per_range lets a range complete once), and an index that walks a thread's
# messages after a watermark. Two new tables and one index on messages: moments at any size.

import django.contrib.postgres.fields
import django.db.models.deletion
import memory_core.rules.ids
import pgtrigger.compiler
import pgtrigger.migrations
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memory_core', '0026_dashboard_turn_hours'),
    ]

    operations = [
        migrations.CreateModel(
            name='CaptureJob',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('thread_ref', models.CharField(max_length=128)),
                ('reason', models.CharField(choices=[('every', 'Every'), ('import', 'Import'), ('more', 'More')], max_length=8)),
                ('queued_at', models.DateTimeField(auto_now_add=True)),
                ('not_before', models.DateTimeField()),
                ('attempts', models.PositiveIntegerField(default=0)),
                ('last_error', models.CharField(blank=True, default='', max_length=32)),
                ('locked_until', models.DateTimeField(blank=True, null=True)),
                ('locked_by', models.CharField(blank=True, default='', max_length=200)),
            ],
        ),
        migrations.CreateModel(
            name='Extraction',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('uid', models.CharField(default=memory_core.rules.ids.extraction_id, editable=False, max_length=40, unique=True)),
                ('thread_ref', models.CharField(max_length=128)),
                ('trigger', models.CharField(choices=[('api', 'Api'), ('console', 'Console'), ('worker', 'Worker')], max_length=8)),
                ('principal', models.CharField(max_length=200)),
                ('outcome', models.CharField(choices=[('done', 'Done'), ('failed', 'Failed')], max_length=8)),
                ('reason', models.CharField(blank=True, default='', max_length=32)),
                ('after_message_id', models.BigIntegerField(default=0)),
                ('last_message_id', models.BigIntegerField(blank=True, null=True)),
                ('last_message_uid', models.CharField(blank=True, default='', max_length=40)),
                ('last_run_id', models.CharField(blank=True, max_length=128, null=True)),
                ('messages', models.PositiveIntegerField(default=0)),
                ('written', django.contrib.postgres.fields.ArrayField(base_field=models.CharField(max_length=40), blank=True, default=list, size=None)),
                ('unchanged', django.contrib.postgres.fields.ArrayField(base_field=models.CharField(max_length=40), blank=True, default=list, size=None)),
                ('dropped', models.PositiveIntegerField(default=0)),
                ('dropped_reasons', models.JSONField(blank=True, default=dict)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
            ],
        ),
        migrations.AddIndex(
            model_name='message',
            index=models.Index(fields=['thread', 'id'], name='message_thread_id_idx'),
        ),
        migrations.AddField(
            model_name='capturejob',
            name='actor',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='memory_core.actor'),
        ),
        migrations.AddField(
            model_name='extraction',
            name='actor',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='memory_core.actor'),
        ),
        migrations.AddIndex(
            model_name='capturejob',
            index=models.Index(fields=['not_before', 'id'], name='capturejob_due_idx'),
        ),
        migrations.AddConstraint(
            model_name='capturejob',
            constraint=models.UniqueConstraint(fields=('actor', 'thread_ref'), name='capturejob_one_per_thread'),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='capturejob',
            trigger=pgtrigger.compiler.Trigger(name='capturejob_not_of_erased_actor', sql=pgtrigger.compiler.UpsertTriggerSql(declare='DECLARE _erased timestamptz;', func="\n            SELECT a.erased_at INTO _erased FROM memory_core_actor a WHERE a.id = NEW.actor_id FOR KEY SHARE OF a;\n            IF _erased IS NOT NULL THEN\n                RAISE EXCEPTION 'the actor this row names was erased'\n                    USING ERRCODE = 'MC410';\n            END IF;\n            RETURN NEW;\n        ", hash='116357a726cae199e5c9b774c345f0f40ad63e30', operation='INSERT', pgid='pgtrigger_capturejob_not_of_erased_actor_9fe80', table='memory_core_capturejob', when='BEFORE')),
        ),
        migrations.AddIndex(
            model_name='extraction',
            index=models.Index(condition=models.Q(('outcome', 'done')), fields=['actor', 'thread_ref', '-id'], name='extraction_watermark_idx'),
        ),
        migrations.AddIndex(
            model_name='extraction',
            index=models.Index(fields=['actor', 'thread_ref', '-created_at'], name='extraction_thread_idx'),
        ),
        migrations.AddIndex(
            model_name='extraction',
            index=models.Index(condition=models.Q(('outcome', 'failed')), fields=['-id'], name='extraction_failed_idx'),
        ),
        migrations.AddConstraint(
            model_name='extraction',
            constraint=models.UniqueConstraint(condition=models.Q(('outcome', 'done')), fields=('actor', 'thread_ref', 'after_message_id'), name='extraction_once_per_range'),
        ),
        migrations.AddConstraint(
            model_name='extraction',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('outcome', 'failed'), ('unchanged', []), ('written', [])), models.Q(('last_message_id__isnull', False), ('outcome', 'done'), ('reason', '')), _connector='OR'), name='extraction_outcome_consistent'),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='extraction',
            trigger=pgtrigger.compiler.Trigger(name='extraction_append_only', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot update or delete rows from % table', TG_TABLE_NAME USING ERRCODE = '25006';", hash='9df7c1b60454f05d5a029d29cd7697c1f30517c3', operation='UPDATE OR DELETE', pgid='pgtrigger_extraction_append_only_88501', table='memory_core_extraction', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='extraction',
            trigger=pgtrigger.compiler.Trigger(name='extraction_not_of_erased_actor', sql=pgtrigger.compiler.UpsertTriggerSql(declare='DECLARE _erased timestamptz;', func="\n            SELECT a.erased_at INTO _erased FROM memory_core_actor a WHERE a.id = NEW.actor_id FOR KEY SHARE OF a;\n            IF _erased IS NOT NULL THEN\n                RAISE EXCEPTION 'the actor this row names was erased'\n                    USING ERRCODE = 'MC410';\n            END IF;\n            RETURN NEW;\n        ", hash='b67b011cf2cfb245b85768241eddead63ed51d66', operation='INSERT', pgid='pgtrigger_extraction_not_of_erased_actor_36d53', table='memory_core_extraction', when='BEFORE')),
        ),
    ]
