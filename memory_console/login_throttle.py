"""Console login throttling: a handful of failed logins, then a 429 without a password check.

After LOGIN_MAX_FAILURES failures for one username, or LOGIN_MAX_FAILURES_PER_IP from one
client address, within LOGIN_THROTTLE_MINUTES, a login attempt is refused with a 429 page
("try again in N minutes") before the password is looked at, and the refusal is written to
the access log (channel console, action "login", outcome 429, principal
"anonymous:<username>"). A successful login clears the failures recorded for its username.

Failures live in a database table (memory_core.LoginAttempt), so every gunicorn worker
counts the same ones. Each attempt inserts its row *before* it counts the others (and
deletes it again if refused or successful), so concurrent guesses cannot all slip under
the limit together: whichever commits k-th sees the k-1 before it.
"""

import ipaddress
import math
import unicodedata
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.utils import timezone

from memory_console.login_form import ConsoleLoginForm
from memory_core.accounts.principals import Principal
from memory_core.ledger import access_log
from memory_core.models import LoginAttempt

USERNAME_MAX = 150  # Django's username column


def attempted_username(request) -> str:
    """The username as posted, made safe to store: normalised the way AuthenticationForm
    normalises it, without characters PostgreSQL or a log reader would choke on, bounded."""
    raw = request.POST.get("username", "")
    text = unicodedata.normalize("NFKC", raw).strip()
    return "".join(ch for ch in text if ch.isprintable())[:USERNAME_MAX]


def client_ip(request) -> str | None:
    """REMOTE_ADDR, or with TRUSTED_PROXIES = N the N-th X-Forwarded-For entry from the
    right (each trusted proxy appends the address it saw); None if not an IP address."""
    candidate = request.META.get("REMOTE_ADDR", "")
    hops = settings.TRUSTED_PROXIES
    if hops:
        header = request.META.get("HTTP_X_FORWARDED_FOR", "")
        forwarded = [part.strip() for part in header.split(",") if part.strip()]
        if forwarded:
            candidate = forwarded[-hops] if len(forwarded) >= hops else forwarded[0]
    try:
        return str(ipaddress.ip_address(candidate))
    except ValueError:
        return None


def _seconds_left(rows, limit: int, window: timedelta, now) -> float:
    """How long until fewer than `limit` of `rows` (failures, newest first) are in the
    window; 0 when fewer already are."""
    if limit <= 0:
        return 0
    recent = list(rows.filter(created_at__gt=now - window).order_by("-created_at")[:limit])
    if len(recent) < limit:
        return 0
    return max(0.0, (recent[-1].created_at + window - now).total_seconds())


def seconds_to_wait(attempt: LoginAttempt) -> float:
    """0 when `attempt` may check its password, else the seconds until it may."""
    window = timedelta(minutes=settings.LOGIN_THROTTLE_MINUTES)
    now = timezone.now()
    others = LoginAttempt.objects.exclude(pk=attempt.pk)
    wait = _seconds_left(
        others.filter(username=attempt.username), settings.LOGIN_MAX_FAILURES, window, now
    )
    if attempt.ip is not None:
        by_ip = _seconds_left(
            others.filter(ip=attempt.ip), settings.LOGIN_MAX_FAILURES_PER_IP, window, now
        )
        wait = max(wait, by_ip)
    return wait


class ThrottledLoginView(auth_views.LoginView):
    """Django's LoginView, counting failures and refusing once there are too many; its form
    tells a deactivated account so, once the password is right (login_form.py)."""

    authentication_form = ConsoleLoginForm

    def post(self, request, *args, **kwargs):
        window = timedelta(minutes=settings.LOGIN_THROTTLE_MINUTES)
        LoginAttempt.objects.filter(created_at__lt=timezone.now() - window).delete()
        username = attempted_username(request)
        self.attempt = LoginAttempt.objects.create(username=username, ip=client_ip(request))
        wait = seconds_to_wait(self.attempt)
        if wait > 0:
            self.attempt.delete()
            return self.refused(username, wait)
        # Not refused: the row stays, as a failure, unless form_valid clears it.
        return super().post(request, *args, **kwargs)

    def form_valid(self, form):
        LoginAttempt.objects.filter(username=self.attempt.username).delete()
        return super().form_valid(form)

    def refused(self, username: str, wait: float):
        minutes = max(1, math.ceil(wait / 60))
        principal = Principal(kind="anonymous", name=f"anonymous:{username}", channel="console")
        access_log.record(
            principal,
            "login",
            429,
            detail={"reason": "throttled", "ip": self.attempt.ip, "retry_after_minutes": minutes},
        )
        form = self.get_form_class()(self.request, initial={"username": username})
        context = self.get_context_data(form=form, throttled=True, retry_minutes=minutes)
        response = self.render_to_response(context, status=429)
        response["Retry-After"] = str(math.ceil(wait))
        return response
