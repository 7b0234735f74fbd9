"""SQL kept as files beside what it serves, and the migration operation that loads them.

A rule the database must also answer (a trigger keeps a summary by it; a page resolves every
actor's chain at once) has its SQL copy in a .sql file next to the rule: rules/chain.sql
beside chain.py, rules/precedence.sql beside precedence.py; the functions that keep the
summaries sit beside their tables (models/maintained.sql). A file holds only
`CREATE OR REPLACE FUNCTION`s, so loading it again is always safe. Changing a rule's SQL is
an edit of its file and a migration whose operation is
`ReloadSQL("rules/precedence.sql", "<digest>")`; tests/test_rule_copies.py holds the result
to the rule.

The digest is what the file held when the migration was written (digest(name)), and nothing
checks it when the migration runs. tests/test_rule_sql_files.py asks that the last
migration to reload each file names the file's digest today: an edit with no migration that
reloads it fails there, with the line to add, and never reaches a database that would keep
the old function.

A reload loads the file as it is in the tree when the migration runs. A database migrated
from nothing therefore loads today's file at every migration that reloads it, and that is
why a reload does not check function bodies (as pg_dump does not): a body may read a
column that a later migration adds, and is checked when it first runs (every write of the
test suite runs these). Changing a function's arguments or result columns needs a
`DROP FUNCTION` before the reload: CREATE OR REPLACE cannot change them.

This module imports no models.
"""

import hashlib
from pathlib import Path

from django.db import migrations

ROOT = Path(__file__).resolve().parent.parent  # memory_core/


def load(name: str) -> str:
    """The text of memory_core/<name> (e.g. "rules/precedence.sql")."""
    path = (ROOT / name).resolve()
    if ROOT not in path.parents or path.suffix != ".sql":
        raise ValueError(f"not a .sql file of memory_core: {name!r}")
    return path.read_text(encoding="utf-8")


def digest(name: str) -> str:
    """A short hash of the file's text, named by the migration that reloads it."""
    return hashlib.sha256(load(name).encode()).hexdigest()[:16]


class ReloadSQL(migrations.RunSQL):
    """Run memory_core/<name> as it is now (`digest`: as it was when the migration was
    written). Backwards nothing, unless `reverse_sql` says (the migration that first
    creates a function drops it there)."""

    def __init__(self, name: str, digest: str, reverse_sql=None):
        self.name = name
        self.digest = digest
        super().__init__(
            "SET LOCAL check_function_bodies = off;\n"
            + load(name)
            # The session's own value again, for the rest of the migration's transaction.
            + "\nRESET check_function_bodies;",
            reverse_sql if reverse_sql is not None else migrations.RunSQL.noop,
        )

    def deconstruct(self):
        kwargs = {}
        if self.reverse_sql is not migrations.RunSQL.noop:
            kwargs["reverse_sql"] = self.reverse_sql
        return self.__class__.__name__, [self.name, self.digest], kwargs

    def describe(self):
        return f"Reload {self.name}"
