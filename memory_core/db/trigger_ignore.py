"""Who may lift a trigger with `pgtrigger.ignore`: the owner of the tables, never the server.

Every django-pgtrigger trigger first asks `public._pgtrigger_should_ignore(TG_NAME)` whether to
stand aside, and pgtrigger's own version says yes to any session that names the trigger in the
setting `pgtrigger.ignore`, which any role may set. The server's role writes memories, keys,
scopes and memberships, so with that one setting it could have lifted every guard on them: a
memory's fact rewritten, a memory deleted outside forget, a revoked key un-revoked, a key
rebound to another actor. GUARD below says yes only when the role running the statement holds
the privileges of the function's owner (the role that migrates and owns every table; or a
superuser): a role that could as well drop the trigger. For the server's role every trigger
holds, whatever it sets.

It asks about current_user, not session_user: the tests log in as the owner and act as the
server's role (tests/roles.py), and code that runs with the owner's rights (a SECURITY
DEFINER function, such as forget's delete) must still be able to lift what it was written to
lift. Membership of the server's role says nothing (the owner is a member of it, so that the
tests can act as it); only the reverse would.

Code that runs with the owner's rights on the server's behalf (a SECURITY DEFINER function, a
referential action such as ON DELETE CASCADE) sees the server's setting too. None of it writes
a table that carries a pgtrigger trigger, except forget's function, which sets the setting
itself, and the cascades of a memory's DELETE, which the server makes only through that
function. (Pinning the setting in a function's SET clause would take a superuser's
GRANT SET ON PARAMETER.) tests/test_guards_hold_for_app_role.py holds all this against the
catalog.

pgtrigger re-creates its function with every trigger it installs (CREATE OR REPLACE), so GUARD
is put back after every `migrate` (post_migrate, like the grants of privileges.py) and, while
`migrate` runs, right after any statement that re-created it, in that statement's transaction,
so no server ever sees pgtrigger's version between a migration and the end of `migrate`.

With one role (DATABASE_OWNER_URL unset) the server is the owner, and this changes nothing:
the triggers are its only wall, and it can lift them, as before.

This module imports no models, like privileges.py.
"""

import re

IGNORE_FUNCTION = '"public"._pgtrigger_should_ignore'

GUARD = f"""
CREATE OR REPLACE FUNCTION {IGNORE_FUNCTION}(trigger_name NAME)
RETURNS BOOLEAN AS $$
    -- memory_core/db/trigger_ignore.py: only a role with the owner's privileges lifts a trigger.
    -- Everything is schema-qualified: the caller chooses the search_path.
    DECLARE
        _setting TEXT := pg_catalog.current_setting('pgtrigger.ignore', true);
        _pgtrigger_ignore TEXT[];
    BEGIN
        -- Every trigger asks on every row: unset or cleared ('' once a SET LOCAL has ended),
        -- the answer comes before any catalog read or exception block (a subtransaction).
        IF _setting IS NULL OR _setting = '' THEN
            RETURN FALSE;
        END IF;
        BEGIN
            _pgtrigger_ignore := _setting::pg_catalog.text[];
        EXCEPTION WHEN OTHERS THEN
            RETURN FALSE;
        END;
        IF (trigger_name = ANY(_pgtrigger_ignore)) IS NOT TRUE THEN
            RETURN FALSE;
        END IF;
        RETURN COALESCE((
            SELECT pg_catalog.pg_has_role(current_user, p.proowner, 'USAGE')
            FROM pg_catalog.pg_proc p
            WHERE p.oid
                = 'public._pgtrigger_should_ignore(pg_catalog.name)'::pg_catalog.regprocedure
        ), FALSE);
    END;
$$ LANGUAGE plpgsql;
"""

# A statement that (re-)creates the function: pgtrigger's installation of any trigger, or GUARD,
# told apart by its mark.
_CREATES_IGNORE_FUNCTION = re.compile(
    r"FUNCTION\s+(?:\"?public\"?\.)?_pgtrigger_should_ignore\s*\(", re.IGNORECASE
)
_GUARD_MARK = "memory_core/db/trigger_ignore.py"


def install(cursor) -> None:
    """Put GUARD in place; run by the owner (or a superuser)."""
    cursor.execute(GUARD)


def _may_install(cursor) -> bool:
    """Whether the migrating role may replace the function: it owns it, or it is not there."""
    cursor.execute(
        "SELECT coalesce(pg_has_role(current_user, p.proowner, 'USAGE'), true)"
        " FROM (SELECT to_regprocedure('public._pgtrigger_should_ignore(name)') AS oid) f"
        " LEFT JOIN pg_proc p ON p.oid = f.oid"
    )
    return cursor.fetchone()[0]


def _reinstall_after_pgtrigger(execute, sql, params, many, context):
    """execute_wrapper for `migrate`: a statement that re-created pgtrigger's function is
    followed at once by GUARD, on the same cursor and in the same transaction."""
    result = execute(sql, params, many, context)
    if isinstance(sql, str) and _CREATES_IGNORE_FUNCTION.search(sql) and _GUARD_MARK not in sql:
        execute(GUARD, None, False, context)
    return result


def guard_during_migrate(sender, using, **kwargs) -> None:
    """pre_migrate: every statement of the migrations goes through the wrapper above."""
    from django.db import connections

    wrappers = connections[using].execute_wrappers
    if _reinstall_after_pgtrigger not in wrappers:
        wrappers.append(_reinstall_after_pgtrigger)


def install_after_migrate(sender, using, **kwargs) -> None:
    """post_migrate (also sent by `flush`): GUARD in place, whatever the migrations did."""
    from django.db import connections, transaction

    connection = connections[using]
    if _reinstall_after_pgtrigger in connection.execute_wrappers:
        connection.execute_wrappers.remove(_reinstall_after_pgtrigger)
    with transaction.atomic(using=using), connection.cursor() as cursor:
        if _may_install(cursor):
            install(cursor)
