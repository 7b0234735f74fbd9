"""`create_user NAME [--grant SCOPE:ROLE ...] [--password-from-stdin]`: a console user who is
not a superuser (those come from `createsuperuser`), with its grants.

The password is read from the first line of stdin with `--password-from-stdin` (for
scripts), and otherwise asked for twice at the terminal; it is never an argument, where it
would sit in the shell's history and the process list. Every `--grant` is checked (the
scope exists, the role is admin or auditor) before anything is asked or written; the user
and its grants are then one change (users.create_user): a `user.created` event and a
`grant.set` event per grant, or, on any refusal, nothing and a non-zero exit.
"""

import getpass
import sys

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from memory_core.accounts import users
from memory_core.accounts.principals import Principal
from memory_core.errors import DomainError
from memory_core.models import Scope
from memory_core.models.access import Role


class Command(BaseCommand):
    help = (
        "Create console user NAME (not a superuser), optionally with grants "
        "(--grant tenant:acme:admin, repeatable). The password comes from stdin "
        "(--password-from-stdin) or is asked for twice."
    )
    stealth_options = ("stdin",)  # tests hand in their own

    def add_arguments(self, parser):
        parser.add_argument("username", metavar="NAME", help="the new user's username")
        parser.add_argument(
            "--grant",
            action="append",
            default=[],
            metavar="SCOPE:ROLE",
            help=f"a role ({' or '.join(Role.values)}) at an existing scope, e.g. "
            "tenant:acme:admin; repeatable",
        )
        parser.add_argument(
            "--password-from-stdin",
            action="store_true",
            help="read the password from the first line of stdin instead of asking",
        )

    def handle(self, *args, username, grant, password_from_stdin, **options):
        grants = [_parse_grant(value) for value in grant]
        # Before the password is asked for (users.create_user checks again, under a lock).
        if get_user_model().objects.filter(username__iexact=username.strip()).exists():
            raise CommandError(f"a user named {username.strip()!r} exists already")
        stdin = options.get("stdin") or sys.stdin
        password = _read_password(stdin) if password_from_stdin else _ask_password(stdin)
        try:
            person = users.create_user(
                username, password, principal=Principal.system("cli"), grants=grants
            )
        except DomainError as error:
            raise CommandError(error.message) from error
        name = person.get_username()
        if not grants:
            self.stdout.write(f"Created user {name}; they see nothing until given a grant.")
            return
        held = ", ".join(f"{role} of {scope.token}" for scope, role in grants)
        self.stdout.write(f"Created user {name}: {held}.")


def _parse_grant(value: str) -> tuple[Scope, str]:
    """`SCOPE:ROLE` (the role after the last colon: scopes hold colons themselves)."""
    token, _, role = value.rpartition(":")
    if not token or not role:
        raise CommandError(f"--grant {value!r}: give SCOPE:ROLE, e.g. tenant:acme:admin")
    if role not in Role.values:
        raise CommandError(f"--grant {value!r}: the role must be {' or '.join(Role.values)}")
    scope = Scope.objects.filter(token=token).first()
    if scope is None:
        raise CommandError(f"--grant {value!r}: there is no scope {token!r}")
    return scope, role


def _read_password(stdin) -> str:
    password = stdin.readline().rstrip("\r\n")
    if not password:
        raise CommandError("--password-from-stdin: the first line of stdin is empty")
    return password


def _ask_password(stdin) -> str:
    if not stdin.isatty():
        raise CommandError(
            "no terminal to ask for the password: pipe it in with --password-from-stdin"
        )
    password = getpass.getpass("Password: ")
    if password != getpass.getpass("Password (again): "):
        raise CommandError("the two passwords differ; nothing was created")
    return password
