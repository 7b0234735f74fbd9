"""The server's database role: it owns nothing and may only read and append the ledger and
the access log, whatever it sets; migrations run as the owner (memory_core/db/privileges.py).

The triggers (tests/test_database_guarantees.py) are the second wall: they refuse even the
owner, but any role that may write a table may also lift them with `pgtrigger.ignore`.
"""

import psycopg
import pytest
from django.conf import settings
from django.core.management import load_command_class
from django.db import ProgrammingError, connection, transaction
from psycopg import errors

from memory_console import database
from memory_core import writes
from memory_core.db import privileges
from memory_core.models import AccessLog, LedgerEvent
from tests import roles

PROTECTED = {
    "memory_core_ledgerevent": LedgerEvent,
    "memory_core_accesslog": AccessLog,
}


def _app_role():
    role = roles.app_role()
    if role is None:
        pytest.skip("the tests run as one role (DATABASE_OWNER_URL unset, or no SET ROLE)")
    return role


def _trigger_names(table: str) -> str:
    """The value of pgtrigger.ignore that lifts every trigger on `table`."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT array_agg(tgname ORDER BY tgname)::text FROM pg_trigger"
            " WHERE tgrelid = %s::regclass AND NOT tgisinternal",
            [table],
        )
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("table", sorted(PROTECTED))
def test_the_app_role_cannot_change_or_remove_rows_even_with_the_triggers_ignored(
    table, org, operator
):
    _app_role()
    writes.publish(org.acme, "units", "report distances in kilometres", principal=operator)
    model = PROTECTED[table]
    before = list(model.objects.order_by("id").values_list())
    assert before
    ignore = _trigger_names(table)
    statements = [
        f"UPDATE {table} SET principal = 'mallory'",
        f"DELETE FROM {table}",
        f"TRUNCATE {table} CASCADE",
    ]
    # The same setting lets the owner through (rolled back): it names the right triggers,
    # so what stops the app role below is its privileges.
    with transaction.atomic(), roles.as_owner(), connection.cursor() as cursor:
        cursor.execute("SELECT set_config('pgtrigger.ignore', %s, true)", [ignore])
        cursor.execute(f"DELETE FROM {table}")
        assert cursor.rowcount == len(before)
        transaction.set_rollback(True)

    with roles.connect_as_app() as conn:
        assert conn.execute("SELECT session_user, current_user").fetchone() == (
            roles.app_role(),
            roles.app_role(),
        )
        for sql in statements:
            with pytest.raises(errors.InsufficientPrivilege), conn.transaction():
                conn.execute(f"SET LOCAL pgtrigger.ignore = '{ignore}'")
                conn.execute(sql)
    assert list(model.objects.order_by("id").values_list()) == before


@pytest.mark.parametrize("table", sorted(PROTECTED))
def test_the_servers_own_connection_is_refused_through_pgtrigger_ignore(table, org):
    """The same through Django and pgtrigger.ignore, as the forget service lifts a trigger."""
    import pgtrigger

    _app_role()
    model = PROTECTED[table]
    count = model.objects.count()
    assert count
    uris = [f"memory_core.{model.__name__}:{t.name}" for t in model._meta.triggers]
    for attempt in (
        lambda: model.objects.update(principal="mallory"),
        lambda: model.objects.all().delete(),
    ):
        with pytest.raises(ProgrammingError, match="permission denied"):
            with pgtrigger.ignore(*uris), transaction.atomic():
                attempt()
    assert model.objects.count() == count


def test_the_app_role_owns_nothing(db):
    role = _app_role()
    with roles.connect_as_app() as conn:
        owned = conn.execute(
            """SELECT classid::regclass::text, objid FROM pg_shdepend
               WHERE refclassid = 'pg_authid'::regclass AND deptype = 'o'
                 AND refobjid = (SELECT oid FROM pg_roles WHERE rolname = current_user)"""
        ).fetchall()
        assert owned == [], "objects owned by the app role, in any database"
        for catalog, owner in [
            ("pg_class", "relowner"),
            ("pg_proc", "proowner"),
            ("pg_type", "typowner"),
            ("pg_namespace", "nspowner"),
        ]:
            found = conn.execute(
                f"SELECT count(*) FROM {catalog} WHERE {owner} = %s::regrole", [role]
            ).fetchone()[0]
            assert found == 0, catalog
        database_owner = conn.execute(
            "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database()"
        ).fetchone()[0]
        assert database_owner != role


@pytest.mark.parametrize(
    "sql",
    [
        "ALTER TABLE memory_core_ledgerevent DISABLE TRIGGER ALL",
        "ALTER TABLE memory_core_accesslog DISABLE TRIGGER USER",
        "ALTER TABLE memory_core_ledgerevent ADD COLUMN note text",
        "ALTER TABLE memory_core_accesslog OWNER TO CURRENT_USER",
        "DROP TABLE memory_core_accesslog",
        "DROP TABLE memory_core_ledgerevent CASCADE",
        # Every pgtrigger trigger asks this function whether to stand aside.
        "CREATE OR REPLACE FUNCTION public._pgtrigger_should_ignore(trigger_name name)"
        " RETURNS boolean LANGUAGE sql AS 'SELECT true'",
        "CREATE TABLE public.shadow (id int)",
        # Replica mode skips ordinary triggers altogether.
        "SET session_replication_role = replica",
        "SET ROLE {owner}",
    ],
)
def test_the_app_role_cannot_alter_drop_or_disable(db, sql):
    _app_role()
    with roles.connect_as_app(autocommit=True) as conn:
        conn.execute("SET lock_timeout = '5s'")
        with pytest.raises(errors.InsufficientPrivilege):
            conn.execute(sql.format(owner=settings.DATABASES["owner"]["USER"]))


def test_the_app_role_cannot_grant_itself_more(db):
    role = _app_role()
    with roles.connect_as_app(autocommit=True) as conn:
        conn.execute(f"GRANT ALL ON memory_core_ledgerevent TO {role}")  # a warning, no grant
        granted = conn.execute(
            "SELECT has_table_privilege('memory_core_ledgerevent', 'DELETE'),"
            " has_table_privilege('memory_core_ledgerevent', 'UPDATE'),"
            " has_table_privilege('memory_core_ledgerevent', 'TRUNCATE')"
        ).fetchone()
    assert granted == (False, False, False)


def test_the_app_role_holds_exactly_the_declared_privileges(db):
    role = _app_role()
    with roles.as_owner(), connection.cursor() as cursor:
        cursor.execute(
            """SELECT c.relname FROM pg_class c
               WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')"""
        )
        tables = {name for (name,) in cursor.fetchall()}
        cursor.execute(
            """SELECT c.relname, a.privilege_type
               FROM pg_class c, aclexplode(c.relacl) a
               WHERE c.relnamespace = 'public'::regnamespace AND a.grantee = %s::regrole""",
            [role],
        )
        held: dict[str, set] = {}
        for table, privilege in cursor.fetchall():
            held.setdefault(table, set()).add(privilege)
    # Every table is a decision: named with its privileges, or named as getting none.
    assert tables == set(privileges.APP_PRIVILEGES) | privileges.NO_PRIVILEGES
    expected = {table: set(granted) for table, granted in privileges.APP_PRIVILEGES.items()}
    assert held == expected
    assert (
        held["memory_core_ledgerevent"]
        == held["memory_core_accesslog"]
        == {
            "SELECT",
            "INSERT",
        }
    )


def test_migrate_runs_as_the_owner_unless_told_otherwise():
    command = load_command_class("memory_console", "migrate")
    parser = command.create_parser("manage.py", "migrate")
    assert parser.parse_args([]).database == privileges.OWNER_ALIAS
    assert parser.parse_args(["--database", "default"]).database == "default"


# --- the embedded server ---------------------------------------------------------------------


@pytest.fixture
def legacy_database():
    """A database as the embedded server made them before the roles: all `postgres`'s."""
    server = database.embedded_server()
    if server is None:
        pytest.skip("DATABASE_URL names an external server")
    name = f"{settings.DATABASES['default']['NAME']}_legacy"
    info = server.get_postmaster_info()
    admin = info.get_uri(user=database.SUPERUSER, database="postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    with psycopg.connect(info.get_uri(user=database.SUPERUSER, database=name)) as conn:
        conn.execute("CREATE EXTENSION pg_trgm")
        conn.execute(
            "CREATE TABLE memory_core_ledgerevent"
            " (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, principal text)"
        )
        conn.execute("CREATE TABLE memory_core_thread (id serial PRIMARY KEY)")
        conn.execute("CREATE VIEW recent AS SELECT id FROM memory_core_ledgerevent")
        conn.execute("CREATE FUNCTION seal(text) RETURNS text LANGUAGE sql AS 'SELECT $1'")
    try:
        yield server, name
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_a_database_from_before_the_roles_is_handed_to_the_owner(legacy_database):
    server, name = legacy_database
    app_url, owner_url = database.prepare_embedded(server, name, create=False)
    with psycopg.connect(owner_url) as conn:
        owners = conn.execute(
            """SELECT 'database', pg_get_userbyid(datdba) FROM pg_database
               WHERE datname = current_database()
               UNION ALL
               SELECT relname, pg_get_userbyid(relowner) FROM pg_class
               WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'v', 'S')
               UNION ALL
               SELECT proname, pg_get_userbyid(proowner) FROM pg_proc WHERE proname = 'seal'"""
        ).fetchall()
        assert {owner for _, owner in owners} == {database.OWNER_ROLE}, owners
        # Extensions' objects are left to the extension.
        assert conn.execute(
            "SELECT pg_get_userbyid(proowner) FROM pg_proc WHERE proname = 'similarity'"
        ).fetchone() == (database.SUPERUSER,)
    with psycopg.connect(app_url) as conn:
        conn.execute("INSERT INTO memory_core_ledgerevent (principal) VALUES ('ok')")
        conn.execute("INSERT INTO memory_core_thread DEFAULT VALUES")  # serial: USAGE granted
        assert conn.execute("SELECT count(*) FROM memory_core_ledgerevent").fetchone() == (1,)
        with pytest.raises(errors.InsufficientPrivilege):
            conn.execute("DELETE FROM memory_core_ledgerevent")
    # Idempotent: the next start finds everything in place.
    assert database.prepare_embedded(server, name, create=False) == (app_url, owner_url)


def test_a_missing_database_is_left_missing_unless_asked_for():
    server = database.embedded_server()
    if server is None:
        pytest.skip("DATABASE_URL names an external server")
    missing = f"{settings.DATABASES['default']['NAME']}_never_made"
    assert database.prepare_embedded(server, missing, create=False) is None
