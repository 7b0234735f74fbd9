"""The memory page: one memory, its version chain, and everything recorded about it
(memory_console/console/memory_page.py renders it)."""

from django.views.decorators.http import require_GET

from memory_console.console.access import console_view, memory_for_reader
from memory_console.console.memory_page import render_memory


@console_view
@require_GET
def memory_detail(request, uid):
    return render_memory(request, memory_for_reader(request.user, uid))
