# Hand-written. Lexical search beyond English (docs/agents/recall.md, "How it ranks"):
#
# 1. the `unaccent` extension (trusted: the owner that migrates may create it where it holds
#    CREATE on the database; otherwise the embedded server's superuser does, as for pgvector
#    in 0008);
# 2. the text search configuration `memory_simple_unaccent`: every word as written, accents
#    removed (`unaccent`, a filtering dictionary), then lower-cased and kept (`simple`): no
#    stemming and no stop words of any one language. Search drops the query's stop words of
#    English, Portuguese, Spanish and German itself (memory_core/recall/stopwords.py);
# 3. Memory.search_simple, a stored generated tsvector of key (weight A) and text (weight B)
#    in that configuration, beside the English `search`. A generated column is computed by
#    the database on insert, so the immutable fact never needs an UPDATE for it; adding it
#    rewrites the memory table once (every row's vector is computed here).
#
# No index: search ranks only the rows of one actor's chain (a few hundred), never starting
# from an index over every tenant's rows. The app role needs nothing new: a text search
# configuration and the extension's functions are usable by every role.
#
# Backwards, the column and the configuration are dropped; the extension stays (as 0008
# leaves pgvector).

import django.contrib.postgres.search
from django.core.management.base import CommandError
from django.db import migrations, models

CONFIG = "memory_simple_unaccent"

NOT_AVAILABLE = (
    "Memory Console needs the PostgreSQL extension `unaccent` (part of PostgreSQL's contrib "
    "modules) for search in languages other than English, and this server does not have it "
    "installed. Install the contrib package on the database server (Debian/Ubuntu: it ships "
    "with `postgresql-<major>`; others: `postgresql-contrib`), then run `migrate` again. The "
    "embedded server (no DATABASE_URL) ships it."
)
NOT_PERMITTED = (
    "Memory Console needs the PostgreSQL extension `unaccent` in database {db!r}. It is "
    "installed on the server, but the role that migrates may not create it: ask a superuser "
    "(or the database's owner) to run `CREATE EXTENSION unaccent;` in that database, then run "
    "`migrate` again."
)

# Word types of the default parser that carry letters; numbers, URLs, e-mail addresses and
# the rest keep `simple` alone, as in pg_catalog.simple.
LETTER_TOKENS = "asciiword, word, numword, asciihword, hword, numhword, hword_asciipart, hword_part"


def create_unaccent_extension(apps, schema_editor):
    """CREATE EXTENSION unaccent, or stop with what to do about it."""
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'unaccent'),"
            " EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'unaccent'),"
            " has_database_privilege(current_database(), 'CREATE')"
        )
        installed, available, may_create = cursor.fetchone()
        if installed:
            return
        if not available:
            raise CommandError(NOT_AVAILABLE)
        if may_create:  # a trusted extension: CREATE on the database is enough
            cursor.execute("CREATE EXTENSION unaccent")
            return
    create = getattr(connection, "create_extension_as_superuser", None)
    if create is None or not create("unaccent"):
        raise CommandError(NOT_PERMITTED.format(db=connection.settings_dict["NAME"]))


def create_configuration(apps, schema_editor):
    """The configuration, naming the `unaccent` dictionary in whatever schema holds it."""
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT quote_ident(n.nspname) FROM pg_extension e"
            " JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'unaccent'"
        )
        (schema,) = cursor.fetchone()
        cursor.execute(
            f"CREATE TEXT SEARCH CONFIGURATION {CONFIG} (COPY = pg_catalog.simple);"
            f"ALTER TEXT SEARCH CONFIGURATION {CONFIG} ALTER MAPPING FOR {LETTER_TOKENS}"
            f" WITH {schema}.unaccent, pg_catalog.simple;"
        )


def drop_configuration(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f"DROP TEXT SEARCH CONFIGURATION {CONFIG}")


class Migration(migrations.Migration):

    dependencies = [
        ("memory_core", "0023_guards_hold_for_app_role"),
    ]

    operations = [
        migrations.RunPython(create_unaccent_extension, migrations.RunPython.noop),
        migrations.RunPython(create_configuration, drop_configuration),
        migrations.AddField(
            model_name="memory",
            name="search_simple",
            field=models.GeneratedField(
                db_persist=True,
                expression=django.contrib.postgres.search.CombinedSearchVector(
                    django.contrib.postgres.search.SearchVector(
                        "key", config="memory_simple_unaccent", weight="A"
                    ),
                    "||",
                    django.contrib.postgres.search.SearchVector(
                        "text", config="memory_simple_unaccent", weight="B"
                    ),
                    django.contrib.postgres.search.SearchConfig("memory_simple_unaccent"),
                ),
                output_field=django.contrib.postgres.search.SearchVectorField(),
            ),
        ),
    ]
