# Attribution's index on a prompt line's text becomes a btree on its 64-bit hash: the hash
# index kept each distinct text in one bucket chain, and a turn showing a text every digest
# shows (a global memory's line) walked that chain to its end on insert.

import memory_core.models.digests
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memory_core', '0018_proposal_page_index'),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='digestline',
            name='digestline_text_hash',
        ),
        migrations.AddIndex(
            model_name='digestline',
            index=models.Index(memory_core.models.digests.TextHash(models.F('text')), name='digestline_text_hash'),
        ),
    ]
