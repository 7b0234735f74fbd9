# Hand-written. The server's role could lift every pgtrigger guard on a table it writes with
# `SET LOCAL pgtrigger.ignore` (memory_core/db/trigger_ignore.py says how, and why no longer):
#
# 1. pgtrigger's _pgtrigger_should_ignore is replaced by one that lets only a role with the
#    owner's privileges lift a trigger (post_migrate does it again after every migrate, as
#    pgtrigger re-creates its function with every trigger it installs).
# 2. Forget, which lifted the delete guard as the server's role, deletes through
#    memory_core_forget_lineage instead: a function the owner wrote, run with the owner's
#    rights, that lifts that one trigger for its own statements only and removes a lineage's
#    every version, newest first, as forget always did; never one version alone, which would
#    bring an older value back to life. A memory's vector and gardening evidence go with it
#    by their ON DELETE CASCADE (0008, 0013).
#
# EXECUTE on the function is revoked from PUBLIC; the server's role gets it from
# memory_core/db/privileges.py (APP_FUNCTIONS), like everything else it holds.

from django.db import migrations

from memory_core.db.trigger_ignore import GUARD

# The pgtrigger id of Memory's `memory_delete_only_by_forget` (pgtrigger_<name>_<hash of the
# model's URI>); tests/test_guards_hold_for_app_role.py checks it names that trigger.
DELETE_TRIGGER_ID = "pgtrigger_memory_delete_only_by_forget_fbc67"

FORGET_LINEAGE = f"""
CREATE FUNCTION memory_core_forget_lineage(forgotten uuid) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE
    version bigint;
    deleted integer := 0;
    caller_set text := pg_catalog.current_setting('pgtrigger.ignore', true);
BEGIN
    -- The delete guard, and nothing the caller named, is lifted until this function returns
    -- (an error undoes the setting with the rest). A SET clause would scope it by itself, but
    -- setting a custom parameter there takes a superuser's GRANT SET ON PARAMETER.
    PERFORM pg_catalog.set_config('pgtrigger.ignore', '{{{DELETE_TRIGGER_ID}}}', true);
    -- Newest first, so no row is deleted while a later version still supersedes it.
    FOR version IN
        SELECT id FROM memory_core_memory WHERE lineage = forgotten ORDER BY id DESC
    LOOP
        DELETE FROM memory_core_memory WHERE id = version;
        deleted := deleted + 1;
    END LOOP;
    PERFORM pg_catalog.set_config('pgtrigger.ignore', coalesce(caller_set, ''), true);
    RETURN deleted;
END;
$$;
REVOKE ALL ON FUNCTION memory_core_forget_lineage(uuid) FROM PUBLIC;
"""

# Backwards: pgtrigger's own function, as every trigger installation writes it. The next
# post_migrate puts GUARD back while this code is installed.
PGTRIGGER_IGNORE = """
CREATE OR REPLACE FUNCTION "public"._pgtrigger_should_ignore(trigger_name NAME)
RETURNS BOOLEAN AS $$
    DECLARE
        _pgtrigger_ignore TEXT[];
        _result BOOLEAN;
    BEGIN
        BEGIN
            SELECT INTO _pgtrigger_ignore
                CURRENT_SETTING('pgtrigger.ignore');
            EXCEPTION WHEN OTHERS THEN
        END;
        IF _pgtrigger_ignore IS NOT NULL THEN
            SELECT trigger_name = ANY(_pgtrigger_ignore)
            INTO _result;
            RETURN _result;
        ELSE
            RETURN FALSE;
        END IF;
    END;
$$ LANGUAGE plpgsql;
"""


class Migration(migrations.Migration):
    dependencies = [
        ("memory_core", "0022_actor_erased"),
    ]

    operations = [
        migrations.RunSQL(FORGET_LINEAGE, "DROP FUNCTION memory_core_forget_lineage(uuid);"),
        migrations.RunSQL(GUARD, PGTRIGGER_IGNORE),
    ]
