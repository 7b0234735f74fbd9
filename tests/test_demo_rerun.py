"""`serve --demo` changes no existing user: a second run leaves every user, its password and
its sessions as they were (and says how to set a new password explicitly); the first run
creates the demo's people through the ledgered service."""

import io
import re

from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.test import Client

from memory_console.management.commands.serve import Command as Serve
from memory_core import actors
from memory_core.models import AccessLog, LedgerEvent


def _serve_demo() -> str:
    """serve's demo step, as `serve --demo` runs it before starting gunicorn."""
    out = io.StringIO()
    Serve(stdout=out)._demo()
    return out.getvalue()


def _admin_password(printed: str) -> str:
    return re.search(r"^\s+admin\s+(\S+)\s+superuser$", printed, re.M).group(1)


def _person(username):
    return get_user_model().objects.get(username=username)


def test_a_second_serve_demo_leaves_the_demo_users_passwords_and_sessions_alone(db):
    first = _serve_demo()
    password = _admin_password(first)
    browser = Client()
    assert browser.login(username="admin", password=password)
    assert browser.get("/").status_code == 200
    users_before = {u.username: u.password for u in get_user_model().objects.all()}
    sessions_before = set(Session.objects.values_list("session_key", "session_data"))
    ledger_before, access_before = LedgerEvent.objects.count(), AccessLog.objects.count()

    second = _serve_demo()

    assert "already loaded" in second
    assert "admin" in second and "password and sessions are unchanged" in second
    assert "python manage.py changepassword admin" in second
    assert password not in second  # no password is shown, none was made
    assert {u.username: u.password for u in get_user_model().objects.all()} == users_before
    assert set(Session.objects.values_list("session_key", "session_data")) == sessions_before
    assert browser.get("/").status_code == 200  # the session still holds
    assert Client().login(username="admin", password=password)
    # Nothing happened, so nothing is on record.
    assert LedgerEvent.objects.count() == ledger_before
    assert AccessLog.objects.count() == access_before


def test_the_first_serve_demo_ledgers_the_creation_of_its_people(db):
    printed = _serve_demo()
    created = LedgerEvent.objects.filter(kind="user.created").order_by("id")
    assert [(e.payload, e.principal, e.scope) for e in created] == [
        ({"user": "admin", "role": "superuser"}, "cli:demo", "global"),
        ({"user": "alice"}, "cli:demo", "global"),
        ({"user": "gus"}, "cli:demo", "global"),
    ]
    assert _person("admin").is_superuser and not _person("alice").is_superuser
    rows = AccessLog.objects.filter(action="user.create", outcome=201, principal="cli:demo")
    assert sorted(row.detail["user"] for row in rows) == ["admin", "alice", "gus"]
    password = _admin_password(printed)
    assert not LedgerEvent.objects.filter(payload__icontains=password).exists()
    assert not any(password in str(row.detail) for row in AccessLog.objects.all())


def test_a_demo_load_keeps_an_existing_users_password(db, django_user_model):
    django_user_model.objects.create_user("alice", password="alices-own-pw-1")
    hashed = _person("alice").password
    printed = _serve_demo()
    assert "alice  (existing account; password unchanged)" in printed
    assert _person("alice").password == hashed
    assert not LedgerEvent.objects.filter(kind="user.created", payload__user="alice").exists()


def test_an_already_loaded_demo_without_its_superuser_says_how_to_make_one(db, operator):
    actors.ensure_scope("tenant:acme", actors.global_scope(), "Acme", principal=operator)
    ledger_before = LedgerEvent.objects.count()
    printed = _serve_demo()
    assert "There is no demo superuser 'admin'" in printed
    assert "createsuperuser" in printed
    assert not get_user_model().objects.exists()
    assert LedgerEvent.objects.count() == ledger_before
