"""`create_user NAME [--grant SCOPE:ROLE ...] [--password-from-stdin]`: a console user who is
not a superuser, with its grants, in one ledgered change; any refusal creates nothing and
exits non-zero."""

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError

from memory_core.accounts import users as user_service
from memory_core.accounts.principals import Principal
from memory_core.errors import Forbidden, Invalid
from memory_core.models import AccessLog, LedgerEvent, ScopeGrant

PASSWORD = "fresh-Pw-91-long!"


def _create(*args, stdin=f"{PASSWORD}\n"):
    out = io.StringIO()
    call_command(
        "create_user",
        *args,
        "--password-from-stdin",
        stdin=io.StringIO(stdin),
        stdout=out,
        stderr=io.StringIO(),
    )
    return out.getvalue()


def _nothing_made(name, ledger_before):
    assert not get_user_model().objects.filter(username=name).exists()
    assert not ScopeGrant.objects.filter(user__username=name).exists()
    assert LedgerEvent.objects.count() == ledger_before


def test_creates_a_user_with_its_grants_and_ledgers_each(org):
    out = _create("carol", "--grant", "tenant:acme:admin", "--grant", "team:acme/ops:auditor")
    assert "Created user carol: admin of tenant:acme, auditor of team:acme/ops." in out
    carol = get_user_model().objects.get(username="carol")
    assert carol.check_password(PASSWORD) and carol.is_active
    assert not carol.is_superuser and not carol.is_staff
    assert set(carol.scope_grants.values_list("scope__token", "role")) == {
        ("tenant:acme", "admin"),
        ("team:acme/ops", "auditor"),
    }
    created = LedgerEvent.objects.get(kind="user.created")
    assert (created.payload, created.scope, created.principal) == (
        {"user": "carol"},
        "global",
        "cli",
    )
    granted = LedgerEvent.objects.filter(kind="grant.set").order_by("id")
    assert [(e.scope, e.payload) for e in granted.filter(id__gt=created.id)] == [
        ("tenant:acme", {"user": "carol", "role": "admin"}),
        ("team:acme/ops", {"user": "carol", "role": "auditor"}),
    ]
    row = AccessLog.objects.get(action="user.create")
    assert (row.outcome, row.channel, row.detail) == (201, "cli", {"user": "carol"})
    assert not LedgerEvent.objects.filter(payload__icontains=PASSWORD).exists()
    assert not any(PASSWORD in str(r.detail) for r in AccessLog.objects.all())


def test_without_a_grant_the_user_is_created_seeing_nothing(db):
    out = _create("dave")
    assert "Created user dave; they see nothing until given a grant." in out
    assert not ScopeGrant.objects.filter(user__username="dave").exists()
    assert LedgerEvent.objects.filter(kind="user.created", payload__user="dave").count() == 1


@pytest.mark.parametrize(
    "grant, message",
    [
        ("tenant:acme:owner", "the role must be admin or auditor"),
        ("tenant:acme", "the role must be admin or auditor"),  # `acme` read as the role
        ("admin", "give SCOPE:ROLE"),
        ("tenant:nowhere:admin", "there is no scope 'tenant:nowhere'"),
    ],
)
def test_a_bad_grant_is_refused_before_anything_is_made(org, grant, message):
    before = LedgerEvent.objects.count()
    with pytest.raises(CommandError, match=message):
        _create("erin", "--grant", "tenant:acme:admin", "--grant", grant)
    _nothing_made("erin", before)
    assert not AccessLog.objects.filter(action="user.create").exists()


def test_the_same_scope_twice_is_refused_and_makes_nothing(org):
    before = LedgerEvent.objects.count()
    with pytest.raises(CommandError, match="name each scope once"):
        _create("erin", "--grant", "tenant:acme:admin", "--grant", "tenant:acme:auditor")
    _nothing_made("erin", before)
    assert AccessLog.objects.get(action="user.create").outcome == 422


@pytest.mark.parametrize(
    "stdin, message",
    [
        ("short\n", "too short"),
        ("password123\n", "too common"),
        ("\n", "the first line of stdin is empty"),
        ("", "the first line of stdin is empty"),
    ],
)
def test_a_refused_password_makes_nothing(org, stdin, message):
    before = LedgerEvent.objects.count()
    with pytest.raises(CommandError, match=message):
        _create("erin", "--grant", "tenant:acme:admin", stdin=stdin)
    _nothing_made("erin", before)


@pytest.mark.parametrize("name", ["owner", "OWNER"])
def test_an_existing_username_is_refused_and_its_user_untouched(users, name):
    hashed = users.owner.password
    before = LedgerEvent.objects.count()
    with pytest.raises(CommandError, match="exists already"):
        _create(name, "--grant", "tenant:globex:admin")
    assert get_user_model().objects.get(username="owner").password == hashed
    assert not ScopeGrant.objects.filter(user=users.owner, scope__token="tenant:globex").exists()
    assert LedgerEvent.objects.count() == before


def test_a_malformed_username_is_refused(db):
    with pytest.raises(CommandError, match="username: Enter a valid username"):
        _create("bad name<")
    assert not get_user_model().objects.exists()


def test_a_refusal_is_a_non_zero_exit(org):
    # manage.py prints a CommandError and exits with its returncode.
    with pytest.raises(CommandError) as refused:
        _create("erin", "--grant", "x:y:owner")
    assert refused.value.returncode == 1


def test_without_a_terminal_or_stdin_flag_it_refuses(db):
    with pytest.raises(CommandError, match="--password-from-stdin"):
        call_command("create_user", "erin", stdin=io.StringIO(""), stdout=io.StringIO())
    assert not get_user_model().objects.exists()


def test_at_a_terminal_it_asks_twice(db, monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    answers = iter([PASSWORD, PASSWORD])
    monkeypatch.setattr("getpass.getpass", lambda prompt="": next(answers))
    call_command("create_user", "erin", stdin=Terminal(), stdout=io.StringIO())
    assert get_user_model().objects.get(username="erin").check_password(PASSWORD)

    answers = iter([PASSWORD, "something-else-91"])
    with pytest.raises(CommandError, match="the two passwords differ"):
        call_command("create_user", "fred", stdin=Terminal(), stdout=io.StringIO())
    assert not get_user_model().objects.filter(username="fred").exists()


# --- the service itself ----------------------------------------------------------------


def test_the_service_refuses_a_non_superuser_and_logs_it(users):
    with pytest.raises(Forbidden):
        user_service.create_user("erin", PASSWORD, principal=users.p_owner)
    assert not get_user_model().objects.filter(username="erin").exists()
    row = AccessLog.objects.get(action="user.create", principal="user:owner")
    assert row.outcome == 403
    assert not LedgerEvent.objects.filter(kind="user.created").exists()


def test_the_service_refuses_an_unknown_role(org):
    with pytest.raises(Invalid, match="role must be one of"):
        user_service.create_user(
            "erin", PASSWORD, principal=Principal.system("cli"), grants=[(org.acme, "owner")]
        )
    assert not get_user_model().objects.filter(username="erin").exists()
