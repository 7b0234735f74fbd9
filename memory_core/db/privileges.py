"""What the server's database role may do to each table: the first wall around the ledger.

The server connects as a role that owns nothing (`memory_app` on the embedded server);
migrations run as the role that owns the tables (`memory_owner`), through the `owner`
database alias (README, "Database roles"). The triggers of models/guards.py refuse UPDATE,
DELETE and TRUNCATE of the ledger and the access log. The app role cannot lift a trigger
with `SET pgtrigger.ignore` (memory_core/db/trigger_ignore.py), and holding only SELECT and
INSERT there it cannot even try; the triggers stay, as the second wall, against the owner.

APP_PRIVILEGES (with EXECUTE on the functions of APP_FUNCTIONS) is the whole of what the
app role holds. After every `migrate` (post_migrate,
memory_core/apps.py) apply() revokes everything the role holds in the schema and grants
exactly this, in one transaction: a narrowing takes effect, and a server running meanwhile
never sees a half-applied set. A table not named here gets nothing, so a new table is a
decision, not a default: the suite runs as the app role and fails on it loudly, and
tests/test_database_roles.py fails until it is named. (ALTER DEFAULT PRIVILEGES would have
handed every new table a default set, which the next append-only table would have had to
remember to revoke.)

This module imports no models: the embedded server's setup (memory_console/database.py)
applies it at the first connection, when it adopts a database made before the roles existed.
"""

import re

# The DATABASES alias that migrates: the role that owns the tables.
OWNER_ALIAS = "owner"

SELECT, INSERT, UPDATE, DELETE = "SELECT", "INSERT", "UPDATE", "DELETE"
APPEND_ONLY = (SELECT, INSERT)

APP_PRIVILEGES: dict[str, tuple[str, ...]] = {
    # Append-only: written once, read by the console; never changed or removed by anyone.
    "memory_core_ledgerevent": APPEND_ONLY,
    "memory_core_accesslog": APPEND_ONLY,
    # That a signed ledger checkpoint was taken (the evidence itself is kept elsewhere).
    "memory_core_ledgercheckpoint": APPEND_ONLY,
    # Curation pins and retires (UPDATE; the triggers keep the fact itself read-only). The
    # trigger refuses the role's every DELETE, which it cannot lift (trigger_ignore.py):
    # forget deletes through memory_core_forget_lineage (APP_FUNCTIONS).
    "memory_core_memory": (SELECT, INSERT, UPDATE, DELETE),
    # Forget scrubs stored turns in place; a turn is never deleted.
    # A version's vector: written with it (pending when the embedder failed), filled in or
    # rebuilt later (UPDATE), deleted with it by forget.
    "memory_core_embedding": (SELECT, INSERT, UPDATE, DELETE),
    "memory_core_digest": (SELECT, INSERT, UPDATE),
    # Summaries the database keeps (models/maintained.py and .sql): written only by its
    # triggers, which run as the owner; the server reads them and cannot make them disagree
    # with the memories.
    "memory_core_scopecount": (SELECT,),
    "memory_core_chainconflict": (SELECT,),
    "memory_core_conflictpair": (SELECT,),
    "memory_core_tenantturnhour": (SELECT,),
    "memory_core_actorturnhour": (SELECT,),
    "memory_core_digestline": (SELECT, INSERT, UPDATE),
    # Scopes move under a new parent when an actor's memberships change; actors are renamed.
    # Neither is ever deleted (memories and the ledger refer to them).
    "memory_core_scope": (SELECT, INSERT, UPDATE),
    "memory_core_actor": (SELECT, INSERT, UPDATE),
    # put_actor replaces an actor's memberships.
    "memory_core_membership": (SELECT, INSERT, DELETE),
    # Transcripts: posted by hosts, removed by prune_history.
    "memory_core_thread": (SELECT, INSERT, DELETE),
    "memory_core_message": (SELECT, INSERT, DELETE),
    # Capture (memory_core/capture/): jobs are queued, claimed (UPDATE) and removed when
    # done; each extraction's record is written once and kept (ids and counts only).
    "memory_core_capturejob": (SELECT, INSERT, UPDATE, DELETE),
    "memory_core_extraction": APPEND_ONLY,
    # Keys are revoked (revoked_at), never deleted: the ledger and access log name them.
    "memory_core_apikey": (SELECT, INSERT, UPDATE),
    # Grants change role and are withdrawn.
    "memory_core_scopegrant": (SELECT, INSERT, UPDATE, DELETE),
    # Gardening (memory_core/garden/): a pass inserts proposals and closes them (UPDATE);
    # evidence rows leave with their memory (forget) and nothing else removes a proposal.
    # Health rows are replaced by each pass.
    "memory_core_proposal": (SELECT, INSERT, UPDATE),
    "memory_core_proposalevidence": (SELECT, INSERT, DELETE),
    "memory_core_scopehealth": (SELECT, INSERT, UPDATE, DELETE),
    # Login throttling writes an attempt first and deletes it or prunes old ones.
    "memory_core_loginattempt": (SELECT, INSERT, DELETE),
    # Console users: created, logged in (last_login), passwords changed; never deleted.
    "auth_user": (SELECT, INSERT, UPDATE),
    "django_session": (SELECT, INSERT, UPDATE, DELETE),
    # Django's cache (settings.CACHES, migration 0015): set, read, expired and culled.
    "memory_console_cache": (SELECT, INSERT, UPDATE, DELETE),
    # Read-only schema state: `showmigrations` and runserver's unapplied-migrations warning
    # read it; only `migrate`, as the owner, writes it.
    "django_migrations": (SELECT,),
}

# SECURITY DEFINER functions the app role may call (each made with EXECUTE revoked from
# PUBLIC): a write it may not make itself, made the one way the owner wrote.
APP_FUNCTIONS: tuple[str, ...] = (
    # Forget's delete of a lineage, lifting the delete guard for its own statements only.
    "memory_core_forget_lineage(uuid)",
)

# Tables the app role holds nothing on. The console decides who may do what with scope
# grants, never Django's groups and permissions (which only migrations write), and the
# Django admin is installed but not routed, so nothing reads or writes its log.
NO_PRIVILEGES = frozenset(
    {
        "auth_group",
        "auth_group_permissions",
        "auth_permission",
        "auth_user_groups",
        "auth_user_user_permissions",
        "django_admin_log",
        "django_content_type",
    }
)

# Serialised with any other apply() on the same database: two concurrent GRANTs on one
# table can fail with "tuple concurrently updated".
_LOCK_KEY = 0x6D656D6F7279  # "memory"

_EXISTING = """
    SELECT 'table', c.relname
    FROM pg_class c
    WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
      AND c.relname = ANY(%s)
    UNION ALL
    -- Identity columns (Django's) need no sequence privilege; a serial column's sequence
    -- does, for INSERT to draw its next value.
    SELECT 'sequence', s.oid::regclass::text
    FROM pg_depend d
    JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S'
    JOIN pg_class t ON t.oid = d.refobjid
    WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
      AND d.deptype = 'a' AND t.relnamespace = 'public'::regnamespace AND t.relname = ANY(%s)
    UNION ALL
    -- Declared functions that exist (a database adopted before its migrations has none yet).
    SELECT 'function', to_regprocedure('public.' || f)::text FROM unnest(%s::text[]) f
    WHERE to_regprocedure('public.' || f) IS NOT NULL
    UNION ALL
    SELECT 'held', p.oid::regprocedure::text
    FROM pg_proc p, aclexplode(p.proacl) a
    WHERE p.pronamespace = 'public'::regnamespace AND a.grantee = to_regrole(%s)
"""


def acting_role(options: str) -> str | None:
    """The role a libpq `options` string makes a session act as (`-c role=NAME`): how the
    tests act as the app role on the owner's connection (tests/roles.py)."""
    match = re.search(r"(?:^|\s)-c\s*role=(\S+)", options or "")
    return match.group(1) if match else None


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def statements(
    role: str, tables, sequences=(), functions=APP_FUNCTIONS, held_functions=()
) -> list[str]:
    """The SQL that leaves `role` with exactly APP_PRIVILEGES on the given existing tables
    (and USAGE on the given serial sequences, EXECUTE on the given functions of
    APP_FUNCTIONS). `held_functions`: those it holds EXECUTE on now, taken back first."""
    who = quote_ident(role)
    sql = [
        f"REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {who}",
        f"REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM {who}",
    ]
    # Not ON ALL FUNCTIONS: the extensions' functions in public are not the owner's, and
    # each would answer with a warning.
    sql += [f"REVOKE ALL ON FUNCTION {f} FROM {who}" for f in sorted(held_functions)]
    for table in sorted(tables):
        granted = APP_PRIVILEGES.get(table)
        if granted:
            sql.append(f"GRANT {', '.join(granted)} ON TABLE {quote_ident(table)} TO {who}")
    # Sequence names come from regclass::text, already quoted where they need it.
    sql += [f"GRANT USAGE ON SEQUENCE {sequence} TO {who}" for sequence in sorted(sequences)]
    sql += [f"GRANT EXECUTE ON FUNCTION {f} TO {who}" for f in sorted(functions)]
    return sql


def apply(cursor, role: str) -> None:
    """Grant `role` exactly APP_PRIVILEGES, run by the tables' owner (or a superuser) inside
    a transaction; works on a Django cursor and on a psycopg one alike."""
    cursor.execute("SELECT pg_advisory_xact_lock(%s), current_user", [_LOCK_KEY])
    if cursor.fetchone()[1] == role:
        return  # the app role itself (`migrate --database default`): it can grant nothing
    inserting = [table for table, granted in APP_PRIVILEGES.items() if INSERT in granted]
    cursor.execute(_EXISTING, [list(APP_PRIVILEGES), inserting, list(APP_FUNCTIONS), role])
    found: dict[str, list[str]] = {"table": [], "sequence": [], "function": [], "held": []}
    for kind, name in cursor.fetchall():
        found[kind].append(name)
    cursor.execute(
        ";\n".join(
            statements(role, found["table"], found["sequence"], found["function"], found["held"])
        )
    )


def grant_after_migrate(sender, using, **kwargs) -> None:
    """post_migrate: the app role gets exactly APP_PRIVILEGES on what the migrations made."""
    from django.conf import settings
    from django.db import connections, transaction

    role = getattr(settings, "DATABASE_APP_ROLE", None)
    if not role:
        return  # one role does everything (DATABASE_OWNER_URL unset): nothing to grant
    with transaction.atomic(using=using), connections[using].cursor() as cursor:
        apply(cursor, role)
