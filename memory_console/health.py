"""Liveness with a database round trip, for load balancers and `serve`'s own start-up check."""

from django.db import DatabaseError, connection
from django.http import JsonResponse


def health(request):
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError:
        return JsonResponse({"status": "degraded", "database": "unreachable"}, status=503)
    return JsonResponse({"status": "ok", "database": "ok"})
