"""Liveness with a database round trip, for load balancers and `serve`'s start-up check."""

from django.db import DatabaseError, connection
from ninja import Router, Status

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
