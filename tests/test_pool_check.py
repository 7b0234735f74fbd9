"""The pool's check of a connection at checkout (memory_console/pool_check.py): a healthy
connection is handed out without a round trip; a closed or terminated one is refused, so
the pool replaces it instead of failing a request."""

import select
import time

import psycopg
import pytest
from django.db import connection
from psycopg_pool import ConnectionPool

from memory_console.pool_check import usable

pytestmark = pytest.mark.django_db


def _connect():
    """A connection of the server's role to the test database, outside Django's pool."""
    params = connection.get_connection_params()
    params["dbname"] = connection.settings_dict["NAME"]
    return psycopg.connect(**params, autocommit=True)


@pytest.fixture
def own_connection():
    conn = _connect()
    yield conn
    conn.close()


@pytest.fixture
def asked(monkeypatch):
    """Every time the check falls back to asking the server (psycopg_pool's own check)."""
    calls = []
    original = ConnectionPool.check_connection

    def counted(conn):
        calls.append(conn)
        original(conn)

    monkeypatch.setattr(ConnectionPool, "check_connection", staticmethod(counted))
    return calls


def test_a_healthy_idle_connection_passes_without_asking_the_server(own_connection, asked):
    own_connection.execute("SELECT 1").fetchone()
    usable(own_connection)
    assert asked == []


def test_a_connection_the_server_closed_is_refused(own_connection, asked):
    """The server ends the session (here by its idle-session timeout, as a restart or a
    terminated backend would): the check asks, the ask fails, the pool drops it."""
    own_connection.execute("SET idle_session_timeout = '50ms'")
    time.sleep(0.5)
    with pytest.raises(psycopg.OperationalError):
        usable(own_connection)
    assert asked == [own_connection]


def test_a_closed_connection_is_refused(own_connection):
    own_connection.close()
    with pytest.raises(psycopg.OperationalError):
        usable(own_connection)


def test_a_connection_the_server_spoke_to_unasked_is_asked_and_kept(own_connection, asked):
    """A notification arriving on an idle connection makes its socket readable: the check
    asks the server, which answers, and the connection stays usable."""
    own_connection.execute("LISTEN pool_check")
    with _connect() as sender:
        sender.execute("NOTIFY pool_check")
    # Delivered a moment after the sender's commit: wait until it has arrived.
    readable, _, _ = select.select([own_connection.fileno()], [], [], 5)
    assert readable
    usable(own_connection)
    assert asked == [own_connection]
    assert own_connection.execute("SELECT 1").fetchone() == (1,)


def test_the_pool_checks_with_it():
    """Django's pool is built with psycopg_pool's own check; the backend puts ours in its
    place (memory_console/db_backend/base.py sets the attribute psycopg_pool keeps it in)."""
    pool = connection.pool
    assert pool is not None
    assert pool._check is usable
