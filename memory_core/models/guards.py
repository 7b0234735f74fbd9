"""Database triggers for what must never happen, raising one recognisable error.

pgtrigger's Protect/ReadOnly raise a bare RAISE EXCEPTION (SQLSTATE P0001), which psycopg 3
reports as a ProgrammingError, the class of a bug in the query. A refused write to an
append-only or immutable row is not a malformed query, so these raise SQLSTATE 25006
(read_only_sql_transaction, what PostgreSQL itself raises for writes it will not take),
which Django reports as InternalError, whichever psycopg version is installed.
"""

import pgtrigger

REFUSED_SQLSTATE = "25006"


class _Refusing:
    def get_func(self, model):
        operation = str(self.operation).lower()
        return self.format_sql(
            f"""
            RAISE EXCEPTION 'pgtrigger: Cannot {operation} rows from % table', TG_TABLE_NAME
                USING ERRCODE = '{REFUSED_SQLSTATE}';
            """
        )


class Protect(_Refusing, pgtrigger.Protect):
    """Refuse an operation on every row."""


class ReadOnly(_Refusing, pgtrigger.ReadOnly):
    """Refuse updates that change the listed fields."""


def no_truncate(name: str, what: str) -> pgtrigger.Trigger:
    """TRUNCATE bypasses row triggers, so it needs its own statement-level refusal."""
    return pgtrigger.Trigger(
        name=name,
        level=pgtrigger.Statement,
        when=pgtrigger.Before,
        operation=pgtrigger.Truncate,
        func=f"RAISE EXCEPTION '{what} (TRUNCATE refused)' USING ERRCODE = '{REFUSED_SQLSTATE}';",
    )


# A write naming an erased actor (errors.Gone, 410). Raised by the database only for a write
# that was already past the services' check when the erasure began; see erased_actor_guard.
ERASED_SQLSTATE = "MC410"


def erased_actor_guard(name: str, actor_lookup: str) -> pgtrigger.Trigger:
    """Refuse an insert that names an erased actor.

    `actor_lookup` selects the actor row the new row names (`... FROM memory_core_actor a
    WHERE ...`). It is read FOR KEY SHARE: an erasure marks the actor under FOR UPDATE, so
    an insert either commits before the mark (and the erasure, which runs after it, removes
    it) or waits for the mark and sees it. No row about the person lands behind the erasure.
    """
    return pgtrigger.Trigger(
        name=name,
        when=pgtrigger.Before,
        operation=pgtrigger.Insert,
        declare=[("_erased", "timestamptz")],
        func=f"""
            SELECT a.erased_at INTO _erased {actor_lookup} FOR KEY SHARE OF a;
            IF _erased IS NOT NULL THEN
                RAISE EXCEPTION 'the actor this row names was erased'
                    USING ERRCODE = '{ERASED_SQLSTATE}';
            END IF;
            RETURN NEW;
        """,
    )
