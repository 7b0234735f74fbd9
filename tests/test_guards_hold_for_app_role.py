"""The server's role cannot lift a guard: naming a trigger in `pgtrigger.ignore` changes
nothing it can do (memory_core/db/trigger_ignore.py).

Every pgtrigger trigger in the database is found in the catalog (its function asks
`_pgtrigger_should_ignore`), not in a list kept here. For each, operations that violate it are
derived from what it fires on (UPDATE of each column it guards, DELETE, TRUNCATE, an INSERT
copying a row) or, where only the domain knows what a violation is, taken from VIOLATIONS.
An operation counts when the same setting does change what the owner can do (so it names the
right trigger, and the operation meets it); for the server's role, logged in as itself, the
outcome with the trigger named, and with every trigger named, must be the outcome without.
A trigger that no operation violates fails the test until VIOLATIONS gives it one.
"""

import re
from dataclasses import dataclass, field

import pgtrigger
import psycopg
import pytest
from django.db import InternalError, connection, transaction
from django.utils import timezone
from psycopg import errors

from memory_core import forgetting, transcripts, turns, writes
from memory_core.accounts import keys
from memory_core.capture import queue as capture_queue
from memory_core.db import trigger_ignore
from memory_core.models import (
    ApiKey,
    CaptureJob,
    Digest,
    Extraction,
    LedgerCheckpoint,
    Membership,
    Memory,
    Message,
    Proposal,
    ProposalEvidence,
    Thread,
)
from memory_core.models.guards import REFUSED_SQLSTATE
from tests import roles

# What a trigger fires on: bits of pg_trigger.tgtype.
INSERT, DELETE, UPDATE, TRUNCATE = 4, 8, 16, 32


def _app_role():
    role = roles.app_role()
    if role is None:
        pytest.skip("the tests run as one role (DATABASE_OWNER_URL unset, or no SET ROLE)")
    return role


def _pgid(model, name: str) -> str:
    """The database name of one of `model`'s triggers."""
    return next(t.get_pgid(model) for t in model._meta.triggers if t.name == name)


def _connect_as_owner():
    """A psycopg connection to the test database as the owner itself: the `default` alias
    logs in as the owner and acts as the app role only by an option, left out here."""
    login = connection.settings_dict
    params = {
        "dbname": login["NAME"],
        "user": login["USER"],
        "password": login["PASSWORD"] or None,
        "host": login["HOST"] or None,
        "port": login["PORT"] or None,
    }
    return psycopg.connect(**{k: v for k, v in params.items() if v is not None}, autocommit=True)


# --- the world the operations are tried on ----------------------------------------------------


@pytest.fixture
def world(org, users, operator):
    """A row of every table a trigger guards, committed, so that the server's role, logged in
    as itself on its own connection, sees them."""
    writes.publish(org.acme, "units", "report distances in kilometres", principal=operator)
    writes.remember(org.u1, "tz", "Lisbon", principal=org.acme_agent)
    told = writes.remember(org.u1, "tz", "Porto", principal=org.acme_agent).memory  # 2 versions
    turns.resolve_turn(org.u1, "run_1", principal=org.acme_agent)  # a digest and its lines
    transcripts.record_message(org.u1, "t1", "user", "hello", principal=org.acme_agent)
    bound, _ = keys.create_api_key("bound", org.acme, principal=operator, actor_ref="u1")
    for name in ("old host", "older host"):
        revoked, _ = keys.create_api_key(name, org.acme, principal=operator)
        keys.revoke_api_key(revoked, principal=operator)
    now = timezone.now()
    proposal = Proposal.objects.create(
        kind="stale", scope=org.u1.scope, tenant="tenant:acme", fingerprint="f" * 64, seen_at=now
    )
    ProposalEvidence.objects.create(proposal=proposal, memory=told, role="stale")
    LedgerCheckpoint.objects.create(
        taken_at=now, principal="cli:test", key_id="0" * 64, signature_sha256="1" * 64, events=1
    )
    # Capture: a queued job and an extraction's record.
    capture_queue.enqueue(org.u1, "t1")
    extraction = Extraction.objects.create(
        actor=org.u1, thread_ref="t1", trigger="api", principal="cli:test", outcome="failed"
    )
    return World(
        globex=org.globex.pk,
        ops=org.ops.pk,
        u1=org.u1.pk,
        u2=org.u2.pk,
        bound_key=bound.pk,
        membership=Membership.objects.filter(actor=org.u1).order_by("rank").first().pk,
        memory=told.pk,
        digest=Digest.objects.get(actor=org.u1).pk,
        thread=Thread.objects.get(actor=org.u1).pk,
        message=Message.objects.get(thread__actor=org.u1).pk,
        capture_job=CaptureJob.objects.get(actor=org.u1).pk,
        extraction=extraction.pk,
    )


@dataclass
class World:
    globex: int
    ops: int
    u1: int
    u2: int
    bound_key: int
    membership: int
    memory: int
    digest: int
    thread: int
    message: int
    capture_job: int
    extraction: int


# --- the catalog ------------------------------------------------------------------------------


@dataclass
class Column:
    name: str
    type: str
    automatic: bool  # identity, serial or generated: never written
    unique: bool  # alone in a unique index: a copy needs another value


@dataclass
class Table:
    name: str
    pk: str
    columns: list[Column]
    rows: list = field(default_factory=list)  # primary keys, in order

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)


@dataclass
class Trigger:
    name: str  # in the database: pgtrigger_<name>_<hash>
    table: str
    type: int
    columns: list[str]  # UPDATE OF these
    condition: str  # the WHEN clause

    @property
    def short_name(self) -> str:
        """The name the model gives it (`memory_fields_immutable`)."""
        return re.sub(r"^pgtrigger_|_[0-9a-f]{5}$", "", self.name)

    def condition_columns(self) -> list[str]:
        """The columns its WHEN clause compares (OLD.x IS DISTINCT FROM NEW.x ...)."""
        found = re.findall(r'\b(?:old|new)\.("?)(\w+)\1', self.condition)
        return list(dict.fromkeys(name for _, name in found))


PGTRIGGER_TRIGGERS = """
    SELECT t.tgname, t.tgrelid::regclass::text, t.tgtype,
           ARRAY(SELECT a.attname::text FROM pg_attribute a
                 WHERE a.attrelid = t.tgrelid AND a.attnum = ANY(t.tgattr)),
           coalesce(substring(pg_get_triggerdef(t.oid) FROM ' WHEN \\((.*)\\) EXECUTE '), '')
    FROM pg_trigger t
    JOIN pg_proc p ON p.oid = t.tgfoid
    JOIN pg_class c ON c.oid = t.tgrelid
    WHERE NOT t.tgisinternal AND c.relnamespace = 'public'::regnamespace
      AND p.prosrc LIKE '%\\_pgtrigger\\_should\\_ignore(%'
    ORDER BY 2, 1
"""

COLUMNS = """
    SELECT a.attname, format_type(a.atttypid, a.atttypmod),
           a.attidentity <> '' OR a.attgenerated <> ''
               OR coalesce(pg_get_expr(d.adbin, d.adrelid) LIKE 'nextval(%%', false),
           EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = a.attrelid AND i.indisunique
                   AND i.indnatts = 1 AND i.indkey[0] = a.attnum)
    FROM pg_attribute a
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE a.attrelid = %s::regclass AND a.attnum > 0 AND NOT a.attisdropped
    ORDER BY a.attnum
"""

PRIMARY_KEY = """
    SELECT a.attname FROM pg_index i
    JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
    WHERE i.indrelid = %s::regclass AND i.indisprimary
"""


def _triggers(conn) -> list[Trigger]:
    return [Trigger(*row) for row in conn.execute(PGTRIGGER_TRIGGERS).fetchall()]


def _columns(conn, table: str) -> list[Column]:
    return [Column(*row) for row in conn.execute(COLUMNS, [table]).fetchall()]


def _table(conn, name: str) -> Table:
    pk = conn.execute(PRIMARY_KEY, [name]).fetchone()[0]
    columns = _columns(conn, name)
    rows = [r for (r,) in conn.execute(f'SELECT "{pk}" FROM {name} ORDER BY 1').fetchall()]
    return Table(name, pk, columns, rows)


# --- operations -------------------------------------------------------------------------------


@dataclass
class Operation:
    label: str
    sql: str
    setup: tuple[str, ...] = ()


def _changed(column: Column) -> str:
    """An SQL expression for another value of the column, of its type and length."""
    c, kind = f'"{column.name}"', column.type
    if kind.endswith("[]"):
        return f"array_append({c}, NULL)"
    if kind.startswith(("character", "text")):
        return (
            f"CASE WHEN coalesce({c}, '') = '' THEN 'x'"
            f" WHEN right({c}, 1) = 'x' THEN left({c}, -1) || 'y' ELSE left({c}, -1) || 'x' END"
        )
    if kind == "uuid":
        return "gen_random_uuid()"
    if kind.startswith("timestamp") or kind == "date":
        return f"coalesce({c} + interval '1 day', now())"
    if kind in ("smallint", "integer", "bigint"):
        return f"coalesce({c} + 1, 1)"
    if kind == "boolean":
        return f"NOT coalesce({c}, false)"
    if kind == "jsonb":
        return f"""coalesce({c}, '{{}}') || '{{"changed": true}}'"""
    return "NULL"


def _update(table: Table, column: str, row, value: str | None = None) -> Operation:
    value = value or _changed(table.column(column))
    return Operation(
        f"UPDATE of {column}",
        f'UPDATE {table.name} SET "{column}" = {value} WHERE "{table.pk}" = {row}',
    )


def _copy(table: Table, row, label="INSERT of a copy", setup=(), **values) -> Operation:
    """INSERT of a copy of `row` (its unique columns changed, `values` put in)."""
    written = [c for c in table.columns if not c.automatic]
    exprs = [values.get(c.name) or (_changed(c) if c.unique else f'"{c.name}"') for c in written]
    names = ", ".join(f'"{c.name}"' for c in written)
    return Operation(
        label,
        f"INSERT INTO {table.name} ({names}) SELECT {', '.join(exprs)}"
        f' FROM {table.name} WHERE "{table.pk}" = {row}',
        tuple(setup),
    )


def _erased(table_name: str, row: str):
    """An INSERT copying a row that names u1, once u1 is marked erased."""

    def violations(w: World, tables):
        mark = f"UPDATE memory_core_actor SET erased_at = now() WHERE id = {w.u1}"
        return [_copy(tables[table_name], getattr(w, row), "INSERT naming an erased actor", [mark])]

    return violations


# What only the domain knows violates a trigger: by the name the model gives it.
VIOLATIONS = {
    "apikey_actor_in_reach": lambda w, t: [
        _copy(
            t["memory_core_apikey"],
            w.bound_key,
            "key bound outside its reach",
            reach_id=str(w.globex),
        )
    ],
    "scope_named_in_its_tenant": lambda w, t: [
        _copy(
            t["memory_core_scope"], w.ops, "team made in another tenant", parent_id=str(w.globex)
        ),
        _update(t["memory_core_scope"], "parent_id", w.ops, str(w.globex)),
    ],
    "membership_in_actor_tenant": lambda w, t: [
        _update(t["memory_core_membership"], "scope_id", w.membership, str(w.globex)),
        _copy(
            t["memory_core_membership"],
            w.membership,
            "membership in another tenant",
            scope_id=str(w.globex),
            rank="99",
        ),
    ],
    "digest_not_of_erased_actor": _erased("memory_core_digest", "digest"),
    "memory_not_of_erased_actor": _erased("memory_core_memory", "memory"),
    "thread_not_of_erased_actor": _erased("memory_core_thread", "thread"),
    "message_not_of_erased_actor": _erased("memory_core_message", "message"),
    "capturejob_not_of_erased_actor": _erased("memory_core_capturejob", "capture_job"),
    "extraction_not_of_erased_actor": _erased("memory_core_extraction", "extraction"),
}


def _derived(trigger: Trigger, table: Table):
    """(label, candidates): the operations its firing events call for, one candidate per row,
    tried until one violates it. Columns of a WHEN clause are each a label of their own."""
    rows = table.rows
    if trigger.type & TRUNCATE:
        yield "TRUNCATE", [Operation("TRUNCATE", f"TRUNCATE {table.name} CASCADE")]
    if trigger.type & DELETE:
        yield (
            "DELETE",
            [
                Operation("DELETE", f'DELETE FROM {table.name} WHERE "{table.pk}" = {r}')
                for r in rows
            ],
        )
    if trigger.type & UPDATE:
        guarded = (
            trigger.condition_columns()
            or trigger.columns
            or [c.name for c in table.columns if not c.automatic and c.name != table.pk]
        )
        for column in guarded:
            yield f"UPDATE of {column}", [_update(table, column, r) for r in rows]
    if trigger.type & INSERT:
        yield "INSERT of a copy", [_copy(table, r) for r in rows[:3]]


# --- trying them ------------------------------------------------------------------------------


def _snapshot(conn, tables: list[tuple[str, list[str]]]) -> list:
    """Every readable table's contents (without identity values, which no rollback returns)."""
    parts = [
        f"SELECT '{name}', md5(coalesce(string_agg(ROW({', '.join(cols)})::text, '|'"
        f" ORDER BY ROW({', '.join(cols)})::text), '')) FROM {name} x"
        for name, cols in tables
    ]
    return conn.execute(" UNION ALL ".join(parts)).fetchall()


def _attempt(conn, tables, operation: Operation, ignore: str | None):
    """The outcome of `operation` with `ignore` set, inside the caller's transaction and
    undone after: refused (SQLSTATE and message) or done (what the tables then hold)."""
    with conn.transaction(force_rollback=True):
        if ignore is not None:
            conn.execute("SELECT set_config('pgtrigger.ignore', %s, true)", [ignore])
        for sql in operation.setup:
            conn.execute(sql)
        try:
            with conn.transaction():
                conn.execute(operation.sql)
        except psycopg.Error as error:
            return ("refused", error.sqlstate, error.diag.message_primary)
        return ("done", _snapshot(conn, tables))


def _short(outcome) -> str:
    if outcome[0] == "refused":
        return f"refused ({outcome[1]})"
    return f"done, tables {hash(tuple(outcome[1])) % 10**6:06d}"


def _readable(conn) -> list[tuple[str, list[str]]]:
    """The tables the app role may read, each with its columns that are not identities."""
    names = conn.execute(
        "SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace"
        " AND relkind = 'r' AND has_table_privilege(oid, 'SELECT') ORDER BY 1"
    ).fetchall()
    return [
        (name, [f'x."{c.name}"' for c in _columns(conn, name) if not c.automatic])
        for (name,) in names
    ]


def _check(trigger: Trigger, operations, owner, app, readable, every) -> tuple[set, list]:
    """The labels of the operations that violate `trigger`, and what the app role got
    through: for each label, the first candidate the owner's setting makes a difference to
    is tried as the app role, with the trigger named and with every trigger named."""
    violated, failures = set(), []
    for label, candidates in operations:
        for operation in candidates:
            with owner.transaction(force_rollback=True):
                plain = _attempt(owner, readable, operation, None)
                lifted = _attempt(owner, readable, operation, f"{{{trigger.name}}}")
            if plain == lifted:
                continue  # this row does not meet the trigger: try the next
            violated.add(label)
            with app.transaction(force_rollback=True):
                expected = _attempt(app, readable, operation, None)
                for which, ignore in (("it", f"{{{trigger.name}}}"), ("every trigger", every)):
                    outcome = _attempt(app, readable, operation, ignore)
                    refused = outcome[0] == "refused" and outcome[1] in (
                        plain[1],
                        errors.InsufficientPrivilege.sqlstate,
                    )
                    if outcome != expected or (plain[0] == "refused" and not refused):
                        failures.append(
                            f"{trigger.name}: {label} with {which} named:"
                            f" {_short(outcome)}; without: {_short(expected)} ({operation.sql})"
                        )
            break
    return violated, failures


@pytest.mark.django_db(transaction=True)
def test_no_trigger_lifts_for_the_app_role(world):
    role = _app_role()
    failures, checked = [], {}
    # Autocommit: between attempts neither holds a lock the other's TRUNCATE would wait for.
    with _connect_as_owner() as owner, roles.connect_as_app(autocommit=True) as app:
        assert app.execute("SELECT session_user, current_user").fetchone() == (role, role)
        triggers = _triggers(owner)
        assert triggers, "no pgtrigger trigger found in the catalog"
        every = "{" + ",".join(t.name for t in triggers) + "}"
        tables = {t.table: _table(owner, t.table) for t in triggers}
        readable = _readable(app)
        for trigger in triggers:
            table = tables[trigger.table]
            assert table.rows, f"the world has no row of {table.name} to try {trigger.name} on"
            operations = list(_derived(trigger, table))
            extra = VIOLATIONS.get(trigger.short_name, lambda w, t: [])(world, tables)
            operations += [(op.label, [op]) for op in extra]
            violated, found = _check(trigger, operations, owner, app, readable, every)
            failures += found
            checked[trigger.name] = violated
            if not violated:
                failures.append(f"{trigger.name}: nothing violates it; add to VIOLATIONS")
            for column in trigger.condition_columns():
                if f"UPDATE of {column}" not in violated:
                    failures.append(f"{trigger.name}: no UPDATE of {column} violates it")
    assert not failures, "\n".join(failures)
    # The writes that were reported are among those tried.
    assert "UPDATE of text" in checked[_pgid(Memory, "memory_fields_immutable")]
    assert "DELETE" in checked[_pgid(Memory, "memory_delete_only_by_forget")]
    assert "UPDATE of revoked_at" in checked[_pgid(ApiKey, "apikey_revoked_final")]
    assert "UPDATE of actor_id" in checked[_pgid(ApiKey, "apikey_binding_immutable")]


# --- what was reported, as it was reported ----------------------------------------------------

REPORTED = {
    "memory text rewritten": (
        Memory,
        "memory_fields_immutable",
        "UPDATE memory_core_memory SET text = 'tampered' WHERE id = {memory}",
    ),
    "memory deleted outside forget": (
        Memory,
        "memory_delete_only_by_forget",
        "DELETE FROM memory_core_memory WHERE id = {memory}",
    ),
    "revoked keys un-revoked": (
        ApiKey,
        "apikey_revoked_final",
        "UPDATE memory_core_apikey SET revoked_at = NULL WHERE revoked_at IS NOT NULL",
    ),
    "bound key moved to another actor": (
        ApiKey,
        "apikey_binding_immutable",
        "UPDATE memory_core_apikey SET actor_id = {u2} WHERE id = {bound_key}",
    ),
}


def _state():
    return (
        list(Memory.objects.order_by("id").values_list("id", "text", "lineage")),
        list(ApiKey.objects.order_by("id").values_list("id", "revoked_at", "actor_id")),
    )


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("case", sorted(REPORTED))
def test_the_reported_writes_are_refused_to_the_app_role_logged_in_as_itself(world, case):
    role = _app_role()
    model, name, sql = REPORTED[case]
    before = _state()
    with roles.connect_as_app() as conn:
        assert conn.execute("SELECT session_user, current_user").fetchone() == (role, role)
        with pytest.raises(psycopg.Error) as refused, conn.transaction():
            conn.execute(f"SET LOCAL pgtrigger.ignore = '{{{_pgid(model, name)}}}'")
            conn.execute(sql.format(**vars(world)))
    assert refused.value.sqlstate == REFUSED_SQLSTATE
    assert _state() == before


@pytest.mark.parametrize("case", sorted(REPORTED))
def test_the_reported_writes_are_refused_to_the_app_role_acted_by_the_owner(world, case):
    """The tests' own way in: logged in as the owner, acting as the app role (SET ROLE)."""
    _app_role()
    model, name, sql = REPORTED[case]
    before = _state()
    with pytest.raises(InternalError) as refused:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT session_user <> current_user")
            assert cursor.fetchone() == (True,)
            cursor.execute(f"SET LOCAL pgtrigger.ignore = '{{{_pgid(model, name)}}}'")
            cursor.execute(sql.format(**vars(world)))
    assert refused.value.__cause__.sqlstate == REFUSED_SQLSTATE
    assert _state() == before
    # The owner still can (and undoes it): the setting names the right trigger.
    with transaction.atomic(), roles.as_owner(), connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL pgtrigger.ignore = '{{{_pgid(model, name)}}}'")
        cursor.execute(sql.format(**vars(world)))
        assert cursor.rowcount >= 1
        transaction.set_rollback(True)


def test_pgtrigger_ignore_still_lifts_a_trigger_for_the_owner(world):
    """Django's pgtrigger.ignore, as the tests' flush and tampering helpers use it."""
    _app_role()
    uri = "memory_core.Memory:memory_fields_immutable"
    with pgtrigger.ignore(uri), transaction.atomic(), roles.as_owner():
        Memory.objects.filter(pk=world.memory).update(text="rewritten by the owner")
        assert Memory.objects.get(pk=world.memory).text == "rewritten by the owner"
        transaction.set_rollback(True)
    assert Memory.objects.get(pk=world.memory).text == "Porto"


# --- the one lifting the app role may ask for -------------------------------------------------


def test_forget_deletes_through_the_owners_function_which_lifts_only_the_delete_guard(world, users):
    role = _app_role()
    with roles.as_owner(), connection.cursor() as cursor:
        cursor.execute(
            """SELECT p.prosecdef, pg_get_userbyid(p.proowner), p.prosrc, p.proconfig,
                      has_function_privilege(%s, p.oid, 'EXECUTE'),
                      has_function_privilege('public', p.oid, 'EXECUTE')
               FROM pg_proc p WHERE p.oid = 'memory_core_forget_lineage(uuid)'::regprocedure""",
            [role],
        )
        definer, owner, source, config, app_may, public_may = cursor.fetchone()
        cursor.execute(
            "SELECT pg_get_userbyid(relowner) FROM pg_class"
            " WHERE oid = 'memory_core_memory'::regclass"
        )
        table_owner = cursor.fetchone()[0]
    assert definer and owner == table_owner
    assert (app_may, public_may) == (True, False)
    assert "search_path=public, pg_temp" in config
    # It names the delete guard as it is installed, and no other trigger.
    named = set(re.findall(r"pgtrigger_\w+", source))
    assert named == {_pgid(Memory, "memory_delete_only_by_forget")}

    # The caller's own setting does not reach the function's statements, and comes back after.
    memory = Memory.objects.get(pk=world.memory)
    every = "{" + ",".join(t.get_pgid(Memory) for t in Memory._meta.triggers) + "}"
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT set_config('pgtrigger.ignore', %s, true)", [every])
        forgetting.forget(memory, principal=users.p_owner)
        cursor.execute("SELECT current_setting('pgtrigger.ignore')")
        assert cursor.fetchone() == (every,)
        # The evidence went with the memory, and its trigger (not lifted in there) closed the
        # proposal.
        assert not ProposalEvidence.objects.exists()
        assert Proposal.objects.get().state == "obsolete"
    assert not Memory.objects.filter(lineage=memory.lineage).exists()


# --- what runs with the owner's rights on the app role's behalf -------------------------------

WRITES = r"(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM|TRUNCATE(?:\s+TABLE)?)\s+(?:ONLY\s+)?"


def test_no_owner_rights_code_writes_a_guarded_table_with_the_callers_setting(db):
    """A SECURITY DEFINER function, what it calls and the triggers its writes fire run as
    the owner, and a referential action as the table's owner: the guard lets the owner
    through, with whatever the server's role set. So no such function but forget's (which
    sets its own) writes a table that carries a pgtrigger trigger, and every cascade into one
    starts from a write the app role cannot make."""
    _app_role()
    with roles.as_owner(), connection.cursor() as cursor:
        cursor.execute(
            """SELECT DISTINCT c.relname FROM pg_trigger t
               JOIN pg_proc p ON p.oid = t.tgfoid JOIN pg_class c ON c.oid = t.tgrelid
               WHERE NOT t.tgisinternal AND p.prosrc LIKE '%\\_pgtrigger\\_should\\_ignore(%'"""
        )
        guarded = {name for (name,) in cursor.fetchall()}
        cursor.execute(
            """SELECT p.oid::regprocedure::text, p.prosrc, p.prosecdef FROM pg_proc p
               WHERE p.pronamespace = 'public'::regnamespace
                 AND p.oid <> '_pgtrigger_should_ignore(name)'::regprocedure
                 AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid
                                 AND d.classid = 'pg_proc'::regclass AND d.deptype = 'e')"""
        )
        functions = cursor.fetchall()
        cursor.execute(
            """SELECT conrelid::regclass::text, confrelid::regclass::text FROM pg_constraint
               WHERE contype = 'f' AND connamespace = 'public'::regnamespace
                 AND (confdeltype IN ('c', 'n', 'd') OR confupdtype IN ('c', 'n', 'd'))"""
        )
        cascades = cursor.fetchall()
    sources = {name: source for name, source, _ in functions}
    assert "memory_core_forget_lineage(uuid)" in sources  # the scan sees functions
    # What runs as the owner: the SECURITY DEFINER functions and whatever they call. A
    # function of the caller's rights (a remember's, writes.sql) writes as the app role, and
    # the guards hold for it.
    as_owner = {name for name, _, definer in functions if definer}
    while True:
        called = {
            name
            for name in sources
            if name not in as_owner
            and any(name.split("(")[0] + "(" in sources[caller] for caller in as_owner)
        }
        if not called:
            break
        as_owner |= called
    assert "memory_core_rebuild_conflicts(bigint[],text[])" in as_owner
    writers = {
        name: sorted(t for t in guarded if re.search(WRITES + rf'"?{t}"?\b', sources[name], re.I))
        for name in as_owner
        if "pgtrigger.ignore" not in sources[name]
    }
    assert {name: tables for name, tables in writers.items() if tables} == {}
    # A memory's vector and gardening evidence: their memory's DELETE is refused to the app
    # role, whatever it names (test_no_trigger_lifts_for_the_app_role tries it).
    into_guarded = {(child, parent) for child, parent in cascades if child in guarded}
    assert into_guarded <= {("memory_core_proposalevidence", "memory_core_memory")}


# --- pgtrigger puts its function back; the guard follows --------------------------------------


def _ignore_function_source(cursor) -> str:
    cursor.execute(
        "SELECT prosrc FROM pg_proc WHERE oid = '_pgtrigger_should_ignore(name)'::regprocedure"
    )
    return cursor.fetchone()[0]


def test_a_migration_that_installs_a_trigger_leaves_the_guard_in_place(db):
    """While `migrate` runs, a statement that re-creates pgtrigger's function is followed, in
    its transaction, by the guard; post_migrate puts it back in any case."""
    _app_role()
    immutable = next(t for t in Memory._meta.triggers if t.name == "memory_fields_immutable")
    install_sql = immutable.compile(Memory).install_sql
    with transaction.atomic(), roles.as_owner(), connection.cursor() as cursor:
        trigger_ignore.guard_during_migrate(sender=None, using="default")
        try:
            cursor.execute(install_sql)
            assert trigger_ignore._GUARD_MARK in _ignore_function_source(cursor)
        finally:
            trigger_ignore.install_after_migrate(sender=None, using="default")
        assert trigger_ignore._reinstall_after_pgtrigger not in connection.execute_wrappers
        # Without the wrapper, pgtrigger's own version is what an installation leaves...
        cursor.execute(install_sql)
        assert trigger_ignore._GUARD_MARK not in _ignore_function_source(cursor)
        # ...until post_migrate.
        trigger_ignore.install_after_migrate(sender=None, using="default")
        assert trigger_ignore._GUARD_MARK in _ignore_function_source(cursor)
        transaction.set_rollback(True)


@pytest.mark.django_db(transaction=True)
def test_the_app_role_can_neither_replace_the_guard_nor_fool_its_lookup(world):
    role = _app_role()
    with roles.connect_as_app(autocommit=True) as conn:
        with pytest.raises(errors.InsufficientPrivilege):
            conn.execute(trigger_ignore.GUARD)
        # A temporary table named like the catalog it reads (temporary tables come first in
        # the search path) is not read in its place.
        conn.execute("CREATE TEMP TABLE pg_proc (oid regprocedure, proowner oid)")
        conn.execute(
            "INSERT INTO pg_proc VALUES ('_pgtrigger_should_ignore(name)', %s::regrole)", [role]
        )
        ignore = "{" + _pgid(Memory, "memory_fields_immutable") + "}"
        with pytest.raises(errors.ReadOnlySqlTransaction), conn.transaction():
            conn.execute(f"SET LOCAL pgtrigger.ignore = '{ignore}'")
            conn.execute(f"UPDATE memory_core_memory SET text = 'x' WHERE id = {world.memory}")
    assert Memory.objects.get(pk=world.memory).text == "Porto"
