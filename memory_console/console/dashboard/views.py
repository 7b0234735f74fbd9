"""The dashboard: the last 30 days at a glance, within the user's grants (reads.py counts
them, at a cost that does not grow with history). The chain is not re-verified here: the
page shows this person's last check and a button to run one."""

from django.views.decorators.http import require_GET

from memory_console.console.common.access import console_view
from memory_console.console.common.rendering import render_page
from memory_console.console.dashboard.capture import capture_state
from memory_console.console.dashboard.reads import dashboard_context
from memory_console.console.ledger.verification import last_verification


@console_view
@require_GET
def dashboard(request):
    context = dashboard_context(request.user)
    context["verification"] = last_verification(request)
    context["capture"] = capture_state(request.user)
    return render_page(request, "console/dashboard/dashboard.html", context)
