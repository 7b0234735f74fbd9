"""Django's PostgreSQL backend, which first makes sure the embedded server is up.

Importing the settings starts no database (memory_console/database.py): `manage.py --help`,
`check` and the pure rule tests never need one. Whatever does need one connects through
Django, and every way Django connects asks the backend for its connection parameters
first: a pooled connection when the pool is made, the owner's unpooled one for `migrate`,
the test runner's to the `postgres` database to make the test database. So that is where
the embedded server is started (or joined), once per process; Django's `connection_created`
signal would come after the connection that needed it. `dbshell` reads the settings
without connecting, so its client does the same before starting psql.

For an entry that is not the embedded server's (DATABASE_URL set) this is Django's backend
unchanged.
"""

from django.db.backends.postgresql import base, client

from memory_console.database import create_extension, ensure_embedded
from memory_console.pool_check import usable


class DatabaseClient(client.DatabaseClient):
    def runshell(self, parameters):
        ensure_embedded(self.connection.settings_dict)
        super().runshell(parameters)


class DatabaseWrapper(base.DatabaseWrapper):
    client_class = DatabaseClient

    def get_connection_params(self):
        ensure_embedded(self.settings_dict)
        return super().get_connection_params()

    @property
    def pool(self):
        """Django's pool, whose health check (CONN_HEALTH_CHECKS) is pool_check.usable:
        Django hands psycopg_pool its own check, an empty query on every checkout."""
        pool = super().pool
        if pool is not None and self.settings_dict["CONN_HEALTH_CHECKS"]:
            # psycopg_pool keeps its `check` argument here; tests/test_pool_check.py
            # fails if that ever changes.
            pool._check = usable
        return pool

    def create_extension_as_superuser(self, name: str) -> bool:
        """CREATE EXTENSION in this connection's database as the embedded server's superuser
        (migration 0008 asks, for pgvector, which only a superuser may create); False when
        the server is not the embedded one."""
        return create_extension(self.settings_dict, name)
