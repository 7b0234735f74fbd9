"""`migrate`: Django's own command, replaced on purpose (this app comes before Django's in
the command search), with one change: it runs as the role that owns the tables unless told
otherwise. `manage.py help` lists it under [memory_console].

The server's own role (DATABASE_URL, the `default` alias) owns nothing and cannot create or
alter a table, so `python manage.py migrate` migrates through the `owner` alias
(DATABASE_OWNER_URL; when that is unset, the same role as DATABASE_URL, as before the two
roles). Overriding the command's default, rather than choosing credentials in settings by
looking at the command line, keeps one meaning for each alias in every process, and
`--database default` still says what it does. After the migrations, post_migrate grants the
server's role exactly its privileges (memory_core/db/privileges.py).
"""

from django.core.management.commands.migrate import Command as DjangoMigrate

from memory_core.db.privileges import OWNER_ALIAS


class Command(DjangoMigrate):
    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.set_defaults(database=OWNER_ALIAS)
        for action in parser._actions:
            if action.dest == "database":
                action.help = f'Nominates a database to migrate. Defaults to "{OWNER_ALIAS}".'
