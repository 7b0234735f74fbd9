"""Failed console logins, counted to throttle password guessing (login_throttle.py)."""

from django.db import models
from django.utils import timezone


class LoginAttempt(models.Model):
    """One console login attempt not (yet) known to have succeeded.

    A row is written before the password is checked and deleted when the login succeeds
    (with every other failure for that username), or when the attempt is refused unchecked;
    what remains are failures. Rows older than the throttle window are pruned as new ones
    come in, so the table stays as small as the current attack.
    """

    created_at = models.DateTimeField(default=timezone.now)
    username = models.CharField(max_length=150)
    ip = models.GenericIPAddressField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["username", "created_at"], name="login_attempt_user_idx"),
            models.Index(fields=["ip", "created_at"], name="login_attempt_ip_idx"),
            models.Index(fields=["created_at"], name="login_attempt_created_idx"),
        ]
