# A digest line's memory is no longer a foreign key and has no index of its own: at 1m the
# constraint's per-line check at commit and the index's per-line entry cost ~0.3 ms of
# PostgreSQL's time per turn. The turn's write still locks what it shows (turns.STORE_TURN)
# and forget nulls the column by memory_uid (models/digests.py says how). Dropping a
# constraint and an index takes moments, at any size.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory_core", "0020_live_index_covers_selection"),
    ]

    operations = [
        migrations.AlterField(
            model_name="digestline",
            name="memory",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.DO_NOTHING,
                related_name="digest_lines",
                to="memory_core.memory",
            ),
        ),
    ]
