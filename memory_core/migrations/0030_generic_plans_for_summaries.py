# The summaries' trigger functions (models/maintained.sql) now run with
# plan_cache_mode = force_generic_plan: PL/pgSQL re-planned the conflict rebuild on every
# write (about 1 ms, twice per remember that replaces a value). Only the functions' settings
# change; what they compute is the same.

from django.db import migrations

from memory_core.db.sql_files import ReloadSQL


class Migration(migrations.Migration):

    dependencies = [
        ("memory_core", "0029_capture"),
    ]

    operations = [
        ReloadSQL("models/maintained.sql", "a8caf6aa9edc40cf"),
    ]
