# A remember is one call from the server (memory_core_remember, writes.sql) and a ledger
# append is one (memory_core_ledger_append, ledger/ledger.sql): each was a dozen or two
# statements, each a round trip. The summaries' update trigger (models/maintained.sql) leaves
# a key whose retired version was replaced in the same statement to the insert's trigger.

from django.db import migrations

from memory_core.db.sql_files import ReloadSQL

DROP_APPEND = (
    "DROP FUNCTION IF EXISTS memory_core_ledger_append(bigint, varchar, varchar, varchar, "
    "varchar, varchar, jsonb, timestamptz, varchar);"
)
DROP_REMEMBER = (
    "DROP FUNCTION IF EXISTS memory_core_remember(bigint, bigint, bigint, varchar, text, "
    "varchar, uuid, bigint, varchar, varchar, varchar, varchar, timestamptz, boolean, varchar, "
    "smallint, vector, double precision, double precision, double precision, integer, "
    "varchar, varchar, varchar, jsonb, varchar, varchar, varchar);"
)


class Migration(migrations.Migration):

    dependencies = [
        ("memory_core", "0030_generic_plans_for_summaries"),
    ]

    operations = [
        ReloadSQL("ledger/ledger.sql", "a04d8fbfb273a31e", reverse_sql=DROP_APPEND),
        ReloadSQL("writes.sql", "311fff8833d9e985", reverse_sql=DROP_REMEMBER),
        ReloadSQL("models/maintained.sql", "aa85f13f3f6dd7d2"),
    ]
