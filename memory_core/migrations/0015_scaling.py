"""Issue 18: the access-log row carries its request's id, and Django's cache is a table
(settings.CACHES), shared by every server and worker.

The cache table is the one `createcachetable` makes, made here so that `migrate` (which
`serve` runs) is all a deployment needs; the app role's privileges on it are in
memory_core/privileges.py. Adding a nullable column rewrites no row, so the access log's
append-only trigger is not involved.
"""

from django.db import migrations, models

CACHE_TABLE = """
    CREATE TABLE IF NOT EXISTS memory_console_cache (
        cache_key varchar(255) NOT NULL PRIMARY KEY,
        value text NOT NULL,
        expires timestamp with time zone NOT NULL
    );
    CREATE INDEX IF NOT EXISTS memory_console_cache_expires ON memory_console_cache (expires);
"""


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
        migrations.RunSQL(CACHE_TABLE, "DROP TABLE IF EXISTS memory_console_cache"),
    ]
