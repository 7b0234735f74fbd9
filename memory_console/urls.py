"""URLs: the agent API under /api/v1/ (OpenAPI at /api/v1/openapi.json, docs at
/api/v1/docs, health at /api/v1/health); everything else under /api/ is the API's JSON
404. The MCP endpoint at /mcp/ and /mcp/actors/<ref>/ (a trailing slash optional: an MCP
client POSTs to the URL it was given, and would not follow a redirect with its body); any
other path under /mcp/ is a JSON 404. The console is served at /."""

from django.templatetags.static import static
from django.urls import include, path, re_path
from django.views.generic.base import RedirectView

from memory_console.api import api, unknown_path
from memory_console.api.health import root_live, root_ready
from memory_console.mcp import views as mcp
from memory_console.metrics import metrics_view

urlpatterns = [
    # The API's root names no operation (Ninja's own root view is there for reverse()).
    path("api/v1/", unknown_path),
    path("api/v1/", api.urls),
    # Last among the API's routes: an unmatched /api/… path is a JSON 404, not HTML.
    re_path(r"^api/", unknown_path),
    re_path(r"^mcp/?$", mcp.endpoint, name="mcp"),
    # A ref qualified by its tenant holds one "/" (`acme/u1`).
    re_path(r"^mcp/actors/(?P<ref>[^/]+(?:/[^/]+)?)/?$", mcp.endpoint, name="mcp-actor"),
    re_path(r"^mcp/", mcp.unknown_path),
    # Browsers ask for /favicon.ico whatever the page links: sent to the static icon.
    path("favicon.ico", RedirectView.as_view(url=static("img/favicon.svg"), permanent=True)),
    # Liveness and readiness at the root too (memory_console/api/health.py).
    path("health/live", root_live, name="health-live"),
    path("health/ready", root_ready, name="health-ready"),
    # Prometheus text for operators (memory_console/metrics.py): a token or loopback only.
    path("metrics", metrics_view, name="metrics"),
    # The console (docs/administrators/console.md, "Addresses").
    path("", include("memory_console.console.urls")),
]
