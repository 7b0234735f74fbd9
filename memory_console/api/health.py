"""Health: /health (a database round trip, for load balancers and `serve`'s start-up
check; its contract is fixed by docs/agents/api.md), /health/live (the process answers) and
/health/ready (the database answers and every migration is applied)."""

from typing import Literal

from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor
from django.http import JsonResponse
from django.views.decorators.http import require_GET
from ninja import Router, Schema, Status

from memory_console.api.schemas import HealthOut

router = Router(tags=["health"])


@router.get(
    "",
    auth=None,
    response={200: HealthOut, 503: HealthOut},
    url_name="health",
    summary="Is the server up, and can it reach its database?",
)
def health(request):
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError:
        return Status(503, {"status": "degraded", "database": "unreachable"})
    return {"status": "ok", "database": "ok"}


# --- liveness and readiness ---------------------------------------------------------


class LiveOut(Schema):
    status: Literal["ok"]


class ReadyOut(Schema):
    status: Literal["ready", "not ready"]
    database: Literal["ok", "unreachable"]
    migrations: Literal["applied", "pending", "unknown"]


@router.get(
    "/live",
    auth=None,
    response={200: LiveOut},
    url_name="health-live",
    summary="Is the process up? (no database round trip: restart it only if this fails)",
)
def live(request):
    return {"status": "ok"}


_applied = False  # once every migration is applied, it stays so for this process's code


def migrations_applied() -> bool:
    """Every migration this code knows of is recorded as applied in the database."""
    global _applied
    if not _applied:
        executor = MigrationExecutor(connection)
        targets = executor.loader.graph.leaf_nodes()
        _applied = not executor.migration_plan(targets)
    return _applied


def readiness() -> tuple[int, dict]:
    """(status, body) of the readiness probe."""
    unreachable = {"status": "not ready", "database": "unreachable", "migrations": "unknown"}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        applied = migrations_applied()
    except DatabaseError:
        return 503, unreachable
    if not applied:
        return 503, {"status": "not ready", "database": "ok", "migrations": "pending"}
    return 200, {"status": "ready", "database": "ok", "migrations": "applied"}


@router.get(
    "/ready",
    auth=None,
    response={200: ReadyOut, 503: ReadyOut},
    url_name="health-ready",
    summary="Should traffic come here? The database answers and its migrations are applied",
)
def ready(request):
    status, body = readiness()
    return Status(status, body)


# The same two probes at the site's root (/health/live, /health/ready), where an
# orchestrator's probe configuration usually points; no authentication, JSON, never cached.


@require_GET
def root_live(request):
    return _probe(200, {"status": "ok"})


@require_GET
def root_ready(request):
    return _probe(*readiness())


def _probe(status: int, body: dict) -> JsonResponse:
    response = JsonResponse(body, status=status)
    response["Cache-Control"] = "no-store"
    return response
