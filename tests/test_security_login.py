"""Console login throttling: after repeated failures, for one username or from one address,
attempts are refused with a 429 before any password check, and the refusal is logged."""

import re
import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client, RequestFactory, override_settings
from django.utils import timezone

from memory_console.login_throttle import attempted_username, client_ip
from memory_core.accounts import users as accounts
from memory_core.accounts.principals import Principal
from memory_core.models import AccessLog, LoginAttempt

GOOD = "pw-owner-123"


def login(client, username, password, ip="10.0.0.1"):
    return client.post("/login/", {"username": username, "password": password}, REMOTE_ADDR=ip)


def fail(client, username, times, ip="10.0.0.1"):
    for _ in range(times):
        response = login(client, username, "wrong password", ip)
        assert response.status_code == 200
        assert b"did not match" in response.content


def logged_in(client) -> bool:
    return client.get("/").status_code == 200


@pytest.fixture
def no_password_check(monkeypatch):
    """Any password check from here on fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError("the password was checked")

    monkeypatch.setattr("django.contrib.auth.forms.authenticate", refuse)


def test_five_failures_then_a_429_without_a_password_check(client, users, monkeypatch):
    fail(client, "owner", 5)
    assert LoginAttempt.objects.filter(username="owner").count() == 5

    checked = []
    monkeypatch.setattr(
        "django.contrib.auth.forms.authenticate",
        lambda *args, **kwargs: checked.append(1),
    )
    response = login(client, "owner", GOOD)  # even the right password
    assert response.status_code == 429
    assert checked == []
    assert b"Too many failed login attempts. Try again in 15 minutes." in response.content
    assert 14 * 60 < int(response["Retry-After"]) <= 15 * 60
    assert b'value="owner"' in response.content  # the form, ready for later
    assert not logged_in(client)
    # The refusal is not counted as one more failure.
    assert LoginAttempt.objects.filter(username="owner").count() == 5


def test_the_refusal_is_written_to_the_access_log(client, users, no_password_check):
    LoginAttempt.objects.bulk_create(LoginAttempt(username="owner") for _ in range(5))
    login(client, "owner", GOOD, ip="192.0.2.7")
    row = AccessLog.objects.get(action="login")
    assert (row.channel, row.principal, row.outcome) == ("console", "anonymous:owner", 429)
    assert row.detail["reason"] == "throttled"
    assert row.detail["ip"] == "192.0.2.7"


def test_four_failures_still_let_the_right_password_in_and_success_resets(client, users):
    fail(client, "owner", 4)
    assert login(client, "owner", GOOD).status_code == 302
    assert logged_in(client)
    assert not LoginAttempt.objects.filter(username="owner").exists()
    client.logout()
    fail(client, "owner", 5)  # a fresh allowance of five
    assert login(client, "owner", GOOD).status_code == 429


def test_other_usernames_are_not_throttled_by_one_users_failures(client, users):
    fail(client, "owner", 5)
    assert login(client, "auditor", "pw-audit-123").status_code == 302


def test_failures_outside_the_window_do_not_count_and_are_pruned(client, users):
    old = timezone.now() - timedelta(minutes=16)
    LoginAttempt.objects.bulk_create(
        LoginAttempt(username="owner", ip="10.0.0.1", created_at=old) for _ in range(9)
    )
    assert login(client, "owner", GOOD).status_code == 302
    assert not LoginAttempt.objects.filter(created_at__lt=timezone.now() - timedelta(minutes=15))


def test_the_wait_counts_from_the_failure_that_will_leave_the_window(client, users):
    now = timezone.now()
    LoginAttempt.objects.bulk_create(
        [LoginAttempt(username="owner", created_at=now - timedelta(minutes=12))]
        + [LoginAttempt(username="owner", created_at=now - timedelta(minutes=1)) for _ in range(4)]
    )
    response = login(client, "owner", GOOD)
    assert response.status_code == 429
    assert b"Try again in 3 minutes." in response.content


@override_settings(LOGIN_MAX_FAILURES_PER_IP=5)
def test_one_address_guessing_many_usernames_is_throttled(client, users, no_password_check):
    for n in range(5):
        LoginAttempt.objects.create(username=f"guess{n}", ip="198.51.100.9")
    response = login(client, "owner", GOOD, ip="198.51.100.9")
    assert response.status_code == 429
    row = AccessLog.objects.get(action="login", outcome=429)
    assert row.principal == "anonymous:owner"


@override_settings(LOGIN_MAX_FAILURES_PER_IP=5)
def test_the_per_address_limit_does_not_touch_other_addresses(client, users):
    for n in range(5):
        LoginAttempt.objects.create(username=f"guess{n}", ip="198.51.100.9")
    assert login(client, "owner", GOOD, ip="198.51.100.10").status_code == 302


@override_settings(LOGIN_MAX_FAILURES_PER_IP=0)
def test_a_per_address_limit_of_zero_is_off(client, users):
    for n in range(30):
        LoginAttempt.objects.create(username=f"guess{n}", ip="198.51.100.9")
    assert login(client, "owner", GOOD, ip="198.51.100.9").status_code == 302


def test_a_hostile_username_is_stored_safely(client, users):
    hostile = "ow\x00ner\u202e" + "x" * 5000
    response = login(client, hostile, "wrong")
    assert response.status_code == 200
    stored = LoginAttempt.objects.get().username
    assert stored == ("owner" + "x" * 5000)[:150]


def test_usernames_are_normalised_like_the_login_form_does():
    request = RequestFactory().post("/login/", {"username": "  \uff4fwner\t"})
    assert attempted_username(request) == "owner"  # NFKC: fullwidth o is o


@pytest.mark.parametrize(
    ("proxies", "forwarded", "expected"),
    [
        (0, "203.0.113.5", "127.0.0.1"),  # no proxy: the header is the client's word only
        (1, "203.0.113.5", "203.0.113.5"),
        (1, "6.6.6.6, 203.0.113.5", "203.0.113.5"),  # a client-supplied entry is skipped
        (2, "6.6.6.6, 203.0.113.5, 10.0.0.2", "203.0.113.5"),
        (1, "not-an-address", None),
        (1, "", "127.0.0.1"),
    ],
)
def test_the_client_address_behind_trusted_proxies(proxies, forwarded, expected):
    request = RequestFactory().post(
        "/login/", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR=forwarded
    )
    with override_settings(TRUSTED_PROXIES=proxies):
        assert client_ip(request) == expected


@pytest.mark.django_db(transaction=True)
def test_concurrent_guesses_cannot_all_slip_under_the_limit(django_user_model):
    """Twelve guesses at once, as from several gunicorn workers: at most five reach the
    password check, however they interleave."""
    django_user_model.objects.create_user("target", password="the-right-one-123")
    barrier = threading.Barrier(12)
    statuses = []

    def guess():
        try:
            barrier.wait(timeout=10)
            statuses.append(login(Client(), "target", "wrong").status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=guess) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(set(statuses)) <= [200, 429] and len(statuses) == 12
    assert statuses.count(200) <= 5
    assert LoginAttempt.objects.filter(username="target").count() == statuses.count(200)
    assert AccessLog.objects.filter(action="login", outcome=429).count() == statuses.count(429)


# --- a deactivated account ---------------------------------------------------------------


def _deactivate(username):
    accounts.set_active(username, False, principal=Principal.system("cli:test"))


def test_a_deactivated_account_with_the_right_password_is_told_it_is_deactivated(client, users):
    _deactivate("owner")
    response = login(client, "owner", GOOD)
    assert response.status_code == 200 and not logged_in(client)
    assert "This account is deactivated, so it cannot log in." in response.text
    assert "did not match" not in response.text
    # Still a failure for the throttle: it is no way in.
    assert LoginAttempt.objects.filter(username="owner").count() == 1


def test_a_wrong_password_says_the_same_for_a_deactivated_an_active_and_no_account(client, users):
    _deactivate("owner")
    answers = set()
    for username in ("owner", "auditor", "nobody-at-all"):
        response = login(client, username, "a wrong password")
        assert response.status_code == 200 and not logged_in(client)
        assert "deactivated" not in response.text
        answers.add(re.search(r'<p class="error" role="alert">(.*?)</p>', response.text)[1])
    assert answers == {"Your username and password did not match. Please try again."}


def test_an_active_account_still_logs_in(client, users):
    response = login(client, "owner", GOOD)
    assert response.status_code == 302 and logged_in(client)
