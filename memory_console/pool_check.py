"""The pool's check of a connection before a request gets it, without a round trip when the
connection is plainly healthy.

psycopg_pool's own check (what Django's CONN_HEALTH_CHECKS turns on) sends an empty query on
every checkout: a round trip to PostgreSQL for every request, about 8 % of a worker's time
on a turn at 1m. A connection resting in the pool has been read to its end, so its socket
has nothing to read while the server keeps it open. When the server closes it (a restart, a
crash, a terminated backend), the closing message or the end of the stream makes the socket
readable; so does anything else the server sends unasked. Only then is the connection asked
properly (the pool's own check), which discards a dead one and keeps a live one.
"""

import select

from psycopg_pool import ConnectionPool


def usable(conn) -> None:
    """Raise if `conn` cannot serve a request (psycopg_pool's `check` contract)."""
    if conn.closed or conn.broken:
        ConnectionPool.check_connection(conn)  # raises for a closed connection
        return
    poller = select.poll()
    poller.register(conn.fileno(), select.POLLIN | select.POLLERR | select.POLLHUP)
    if poller.poll(0):
        ConnectionPool.check_connection(conn)
