"""The dashboard's capture card: the extractor's state (off, or on with its model), the
queue's depth, the last failure, and the last 30 days' extractions, within the user's grants.

Every figure is bounded: the queue is small by design (one row per waiting thread), the
last failure is one row by extraction_failed_idx, and the window's counts read the last 30
days of extraction records of the actors the user reads. The model's address is shown
without any credentials it may carry (userinfo, query string); the key never is.
"""

from datetime import timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.db.models import Count, Q
from django.utils import timezone

from memory_core.accounts.permissions import readable_scope_roles
from memory_core.capture import extractor
from memory_core.models import CaptureJob, Extraction

WINDOW_DAYS = 30


def _readable(rows, user):
    roles = readable_scope_roles(user)
    if roles is None:
        return rows
    return rows.filter(actor__scope_id__in=list(roles))


def model_address(url: str) -> str:
    """scheme://host[:port]/path of the model's URL, less userinfo, query and fragment."""
    parts = urlsplit(url or "")
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return f"{parts.scheme}://{host}{parts.path}" if host else ""


def capture_state(user) -> dict:
    enabled = extractor.enabled()
    state = {
        "enabled": enabled,
        "model": settings.MEMORY_EXTRACTOR_MODEL if enabled else "",
        "address": model_address(settings.MEMORY_EXTRACTOR_URL) if enabled else "",
        "every": settings.MEMORY_EXTRACT_EVERY,
        "max": settings.MEMORY_EXTRACT_MAX,
        "window_days": WINDOW_DAYS,
    }
    jobs = _readable(CaptureJob.objects.all(), user)
    state.update(jobs.aggregate(queued=Count("id"), retrying=Count("id", filter=Q(attempts__gt=0))))
    records = _readable(Extraction.objects.all(), user)
    since = timezone.now() - timedelta(days=WINDOW_DAYS)
    state.update(
        records.filter(created_at__gte=since).aggregate(
            done=Count("id", filter=Q(outcome="done")),
            failed=Count("id", filter=Q(outcome="failed")),
        )
    )
    state["last_failure"] = (
        records.filter(outcome="failed").select_related("actor").order_by("-id").first()
    )
    state["last_done"] = (
        records.filter(outcome="done").select_related("actor").order_by("-id").first()
    )
    return state
