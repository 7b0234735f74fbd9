"""How the tests reach the database: as the owner to build it, as the app role to use it.

Django's test runner makes the test database, migrates it and, after transactional tests,
flushes it with TRUNCATE: the owner's work, which the app role may not do. Everything else
the tests do should meet the privileges the server meets. So the `default` alias connects
as the owner and, once the database is built, acts as the app role (libpq's
`options=-c role=memory_app`: the session starts as the app role). A test that must do the
owner's work (tamper with the ledger to show verify_ledger notices, ANALYZE, scan every
table) says so with `as_owner()`, inside its own transaction, so it sees the test's
uncommitted rows.

(Django's own OPTIONS["assume_role"] would read better, but with a connection pool it
deadlocks: it quotes the role name through the pool it is configuring a connection for.)

This is a device of the tests only: a server connected as the owner could SET ROLE back. The
server connects as the app role itself; tests/test_database_roles.py connects so too
(`connect_as_app()`), and the reliability suite runs the real server that way.

With one role (DATABASE_OWNER_URL unset), or where the owner may not SET ROLE to the app role
(an external server without `GRANT memory_app TO memory_owner`), the tests run as the one
role they connect as, as before, and the tests of the roles skip.
"""

import re
import warnings
from contextlib import contextmanager

from django.conf import settings
from django.db import DatabaseError, connections
from django.db.transaction import TransactionManagementError

from memory_console.database import ensure_embedded
from memory_core.db.privileges import acting_role

# The app role's own connection parameters, kept when `default` is pointed at the owner.
_app_login: dict = {}
_CREDENTIALS = ("USER", "PASSWORD", "HOST", "PORT")


def build_as_owner() -> None:
    """Before the test database is made: `default` connects as the owner."""
    if not settings.DATABASE_APP_ROLE:
        return
    default, owner = settings.DATABASES["default"], settings.DATABASES["owner"]
    # The app's login is kept for connect_as_app(), outside Django: with the embedded server
    # started first, it names the socket the server really uses.
    ensure_embedded(default)
    _app_login.update({key: default[key] for key in _CREDENTIALS})
    default.update({key: owner[key] for key in _CREDENTIALS})


def act_as_app_role() -> None:
    """After the test database is built: every new `default` connection acts as the app."""
    role = settings.DATABASE_APP_ROLE
    if not role or not _app_login:
        return
    connection = connections["default"]
    try:
        with connection.cursor() as cursor:
            cursor.execute(connection.ops.compose_sql("SET ROLE %s", [role]))
            cursor.execute("RESET ROLE")
    except DatabaseError as error:
        warnings.warn(f"tests run as the owner: it may not act as {role} ({error})", stacklevel=1)
        return
    _reconnect(lambda options: f"{options} -c role={role}".strip())


def stop_acting() -> None:
    """Before the test database is dropped (the owner's work)."""
    _reconnect(lambda options: re.sub(r"\s*-c role=\S+", "", options))


def _reconnect(change) -> None:
    connection = connections["default"]
    options = connection.settings_dict["OPTIONS"]
    options["options"] = change(options.get("options", ""))
    # Pooled connections keep the role they started with.
    connection.close()
    connection.close_pool()


def app_role() -> str | None:
    """The role the tests act as when it is not the owner, else None."""
    return acting_role(connections["default"].settings_dict["OPTIONS"].get("options", ""))


@contextmanager
def as_owner(using: str = "default"):
    """Do the owner's work on the test's own connection, inside the test's transaction."""
    connection = connections[using]
    if not acting_role(connection.settings_dict["OPTIONS"].get("options", "")):
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SET ROLE NONE")  # the session's own role: the owner
    try:
        yield
    finally:
        try:
            with connection.cursor() as cursor:
                cursor.execute("RESET ROLE")  # the role the session started with: the app
        except (DatabaseError, TransactionManagementError):
            # The test's transaction failed; rolling it back undoes SET ROLE NONE as well.
            if not connection.in_atomic_block:
                raise


def connect_as_app(**kwargs):
    """A psycopg connection to the test database that logs in as the app role itself."""
    import psycopg

    default = settings.DATABASES["default"]
    params = {
        "dbname": default["NAME"],
        "user": _app_login["USER"],
        "password": _app_login["PASSWORD"] or None,
        "host": _app_login["HOST"] or None,
        "port": _app_login["PORT"] or None,
    }
    return psycopg.connect(**{k: v for k, v in params.items() if v is not None}, **kwargs)
