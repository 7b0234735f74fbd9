# The garden page reads open proposals of one kind newest first, by time then id.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory_core", "0017_ledger_stream_index"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="proposal",
            name="proposal_open_kind_idx",
        ),
        migrations.AddIndex(
            model_name="proposal",
            index=models.Index(
                condition=models.Q(("state", "open")),
                fields=["kind", "-created_at", "-id"],
                name="proposal_open_kind_idx",
            ),
        ),
    ]
