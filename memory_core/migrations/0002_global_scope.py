"""`global` exists from the first migration: every chain ends in it."""

from django.db import migrations


def create_global(apps, schema_editor):
    Scope = apps.get_model("memory_core", "Scope")
    # On the migrating connection (the owner), not `default`: the server's role has no
    # privileges yet while migrations run.
    Scope.objects.using(schema_editor.connection.alias).get_or_create(
        token="global", defaults={"label": "Everyone", "parent": None, "stream": "global"}
    )


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0001_initial")]

    operations = [migrations.RunPython(create_global, migrations.RunPython.noop)]
