# Django's cache is a table (settings.CACHES), shared by every server and worker: the one
# `createcachetable` makes, made here so that `migrate` (which `serve` runs) is all a
# deployment needs. The app role's privileges on it are in memory_core/db/privileges.py.
# IF NOT EXISTS: a database migrated before this app had migrations already holds it.

from django.db import migrations

CACHE_TABLE = """
    CREATE TABLE IF NOT EXISTS memory_console_cache (
        cache_key varchar(255) NOT NULL PRIMARY KEY,
        value text NOT NULL,
        expires timestamp with time zone NOT NULL
    );
    CREATE INDEX IF NOT EXISTS memory_console_cache_expires ON memory_console_cache (expires);
"""


class Migration(migrations.Migration):
    initial = True
    dependencies = [("memory_core", "0015_scaling")]

    operations = [
        migrations.RunSQL(CACHE_TABLE, "DROP TABLE IF EXISTS memory_console_cache"),
    ]
