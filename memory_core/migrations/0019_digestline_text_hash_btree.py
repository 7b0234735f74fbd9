# Attribution's index on a prompt line's text becomes a btree on its 64-bit hash: the hash
# index kept each distinct text in one bucket chain, and a turn showing a text every digest
# shows (a global memory's line) walked that chain to its end on insert.

import memory_core.models.digests
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory_core", "0018_proposal_page_index"),
    ]

    operations = [
        # The lookup tests both the hash and the text; without this, the planner multiplies
        # the two selectivities as if independent and, for a line every digest shows,
        # expected a hundredth of its matches, sorting all of them where walking the newest
        # digests would stop at the first page (0.6 s against 3 ms at 1m).
        migrations.RunSQL(
            "CREATE STATISTICS digestline_text_hash_dep (dependencies)"
            " ON text, (hashtextextended(text, 0)) FROM memory_core_digestline",
            "DROP STATISTICS digestline_text_hash_dep",
        ),
        migrations.RemoveIndex(
            model_name="digestline",
            name="digestline_text_hash",
        ),
        migrations.AddIndex(
            model_name="digestline",
            index=models.Index(
                memory_core.models.digests.TextHash(models.F("text")), name="digestline_text_hash"
            ),
        ),
    ]
