"""URLs: the agent API under /api/v1 (a later issue) and the console at / (a later issue)."""

from django.urls import path

from memory_console import health

urlpatterns = [
    path("api/v1/health", health.health, name="health"),
]
