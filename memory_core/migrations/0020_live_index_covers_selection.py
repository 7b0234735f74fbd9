# The one-live-row-per-(scope, key) index also carries what a turn's selection reads of the
# chain (applied.SELECTED_IN_CHAIN), so that read never visits the table. Rebuilt in one
# transaction: the rule holds throughout; the memory table is locked while it builds (a few
# seconds at 1m memories).

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory_core", "0019_digestline_text_hash_btree"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="memory",
            name="memory_one_live_per_scope_key",
        ),
        migrations.AddConstraint(
            model_name="memory",
            constraint=models.UniqueConstraint(
                condition=models.Q(("retired_at__isnull", True)),
                fields=("scope", "key"),
                include=("pinned", "created_at", "expires_at", "id"),
                name="memory_one_live_per_scope_key",
            ),
        ),
    ]
