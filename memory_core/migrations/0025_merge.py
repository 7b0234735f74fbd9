# Joins two migrations written side by side: multilingual search (a generated column, the
# text search configuration) and the rules' SQL loaded from files. Neither depends on the
# other; this orders nothing and changes nothing.

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("memory_core", "0024_multilingual_search"),
        ("memory_core", "0024_rule_sql_from_files"),
    ]
    operations = []
