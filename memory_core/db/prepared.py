"""Prepared statements with binary results: a small executor for the statements that run on
every API call (the key, the actor and its chain, a turn's reads and its write, search,
the access-log row, a ledger append).

Each statement lives beside the module it serves (applied.py, turns.py, search.py,
actors.py, keys.py, audit.py, ledger.py); this module only runs them. They skip what the
ORM costs per call: compiling the query (a third of a millisecond each), client-side
parameter binding, and the text-format timestamp parser Django installs (a regular
expression per value, which for a chain of ~500 rows cost more than the query). They still
go through Django's connection, its transaction and its cursor wrapper, so `atomic()`,
error translation (IntegrityError, OperationalError → 503) and query capture in tests
behave as for any other query. tests/test_prepared.py holds each read to the ORM query it
replaces.
"""

from contextlib import contextmanager
from functools import cache, lru_cache

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.backends.postgresql.base import ServerBindingCursor
from psycopg._queries import PostgresQuery, _query2pg_nocache


@lru_cache(maxsize=256)
def _split(query: str, encoding: str):
    """psycopg's reading of a statement's `%(name)s` placeholders, kept whatever the
    statement's length. psycopg keeps it only for statements of up to 4,096 bytes, and
    search.py's ranked statements are 13 KB: encoding and reading them again cost 0.09 ms
    per call, with the caches as an API call finds them. Only this module's statements come
    here, a fixed set of module constants."""
    return _query2pg_nocache(query.encode(encoding), encoding)


class _KeptQuery(PostgresQuery):
    """psycopg's PostgresQuery (private, hence tests/test_prepared.py's check that the
    ranked statements still come through _split), with _split for its parse."""

    def convert(self, query, vars) -> None:
        if not isinstance(query, str) or vars is None:
            return super().convert(query, vars)
        self.query, self._want_formats, self._order, self._parts = _split(query, self._tx.encoding)
        self.dump(vars)


class _PreparedBinaryCursor(ServerBindingCursor):
    """Server-side binding; each statement prepared on first use (per connection), rows
    returned in binary (timestamps decoded in C). Django turns psycopg's prepared
    statements off; settings.py turns them back on (only cursors like this one ever
    prepare) and has PostgreSQL plan them once, generically."""

    _query_cls = _KeptQuery

    def execute(self, query, params=None, **kwargs):
        return super().execute(query, params, prepare=self._prepare, binary=True)

    @property
    def _prepare(self) -> bool:
        # Behind a transaction pooler (settings.DATABASE_POOLER) prepare_threshold is None:
        # a statement prepared on one server connection would not exist on the next.
        return self.connection.prepare_threshold is not None

    def _send_query_prepared(self, name, pgq, *, binary=None):
        super()._send_query_prepared(name, pgq, binary=binary)
        # psycopg records the query it sent only for unprepared statements, and Django's
        # query log (DEBUG, captured queries in tests) reads it from there.
        self._query = pgq


def _open() -> tuple[_PreparedBinaryCursor, object]:
    """A prepared binary cursor on the default connection, and Django's wrapper of it.
    The connection is looked up once: each `django.db.connection.<name>` is a lookup in a
    context-local store, and this runs for every statement of every API call."""
    db = connections[DEFAULT_DB_ALIAS]
    db.close_if_health_check_failed()
    db.ensure_connection()
    db.validate_thread_sharing()
    raw = _PreparedBinaryCursor(db.connection)
    return raw, (db.make_debug_cursor(raw) if db.queries_logged else db.make_cursor(raw))


@contextmanager
def cursor():
    raw, wrapped = _open()
    try:
        yield wrapped
    finally:
        raw.close()


def columns(model, alias: str) -> str:
    """Every concrete column of `model`, in field order, qualified by `alias`."""
    return ", ".join(f"{alias}.{f.column}" for f in model._meta.concrete_fields)


def width(model) -> int:
    return len(model._meta.concrete_fields)


def instance(model, values):
    """A model instance from a row of columns(model, …), as the ORM would load it.

    Only for models whose fields need no conversion from the database value: the ORM runs
    a field's from_db_value (a JSONField's parser, say) when it loads a row, and this does
    not, so such a model is refused rather than loaded half-converted."""
    _require_plain_fields(model)
    return model.from_db(connection.alias, None, values)


@cache
def _require_plain_fields(model) -> None:
    converted = [
        f.name
        for f in model._meta.concrete_fields
        if hasattr(f, "from_db_value")
        or f.get_db_converters(connection) != []
        or connection.ops.get_db_converters(f.cached_col) != []
    ]
    if converted:
        raise TypeError(
            f"{model.__name__} cannot be loaded from a prepared row: "
            f"{', '.join(converted)} need(s) a database converter"
        )


# fetch_all, fetch_one and execute open and close the cursor themselves rather than through
# `cursor()`: they run for every statement of every API call, and the context manager's
# generator costs more than the three lines it would save.


def fetch_all(sql: str, params) -> list[tuple]:
    raw, cur = _open()
    try:
        cur.execute(sql, params)
        return cur.fetchall()
    finally:
        raw.close()


def fetch_one(sql: str, params) -> tuple | None:
    raw, cur = _open()
    try:
        cur.execute(sql, params)
        return cur.fetchone()
    finally:
        raw.close()


def execute(sql: str, params) -> None:
    raw, cur = _open()
    try:
        cur.execute(sql, params)
    finally:
        raw.close()
