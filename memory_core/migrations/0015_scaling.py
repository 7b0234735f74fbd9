"""The access-log row carries its request's id. Adding a nullable column rewrites no row, so
the access log's append-only trigger is not involved.

(This migration also made Django's cache table once; memory_console's own migration 0001
makes it now, IF NOT EXISTS, so the core holds nothing of the console's.)
"""

from django.db import migrations, models

class Migration(migrations.Migration):
    dependencies = [
        ("memory_core", "0014_ledger_checkpoints"),
    ]

    operations = [
        migrations.AddField(
            model_name="accesslog",
            name="request_id",
            field=models.CharField(blank=True, max_length=64, null=True),
        ),
    ]
