"""Small helpers shared by the tests (fixtures are in conftest.py)."""

from django.db import connection

from memory_core.models import AccessLog

TURNS = "/api/v1/turns"


def bearer(secret) -> dict:
    """The Authorization header for an API key's secret; none for a missing secret."""
    return {"Authorization": f"Bearer {secret}"} if secret else {}


def post_turn(client, secret, body):
    return client.post(TURNS, body, content_type="application/json", headers=bearer(secret))


def login(client, user):
    """The test client, logged in to the console as `user`."""
    client.force_login(user)
    return client


def refusals(action: str, outcome: int, principal: str):
    return AccessLog.objects.filter(
        channel="console", action=action, outcome=outcome, principal=principal
    )


def main_query(queries, table: str) -> str:
    """A console list page's query: the one on `table` ordered by id with LIMIT page+1."""
    for query in queries:
        sql = query["sql"]
        if f'FROM "{table}"' in sql and "ORDER BY" in sql and "LIMIT 51" in sql:
            return sql
    raise AssertionError(f"no paged query on {table}")


def explain(sql: str) -> str:
    with connection.cursor() as cursor:
        # Inside the test's transaction only: a sequential scan must not even be tempting.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN " + sql)
        return "\n".join(row[0] for row in cursor.fetchall())


def use_server(settings, server, **extra) -> None:
    """Point pytest-django's `settings` at a scripted model or embedding server (its own
    `settings(**extra)`: the URL, model, and `extra` beside)."""
    for name, value in server.settings(**extra).items():
        setattr(settings, name, value)
