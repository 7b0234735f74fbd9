# A remember's conflict rebuild skips the pairs with nothing to resolve: no conflict kept,
# and fewer than two held values of the key in the chain (models/maintained.sql). Its
# near-duplicate check reads the candidates' ids from the live index and their vectors in
# one scan, and a candidate's text only when its words are compared (writes.sql).

from django.db import migrations

from memory_core.db.sql_files import ReloadSQL


class Migration(migrations.Migration):

    dependencies = [
        ("memory_core", "0031_remember_in_one_call"),
    ]

    operations = [
        ReloadSQL("writes.sql", "8873f8cae7760457"),
        ReloadSQL("models/maintained.sql", "6aa249e7e95bbd7a"),
    ]
