"""`grant USER SCOPE --role admin|auditor`: give a console user a role at a scope."""

from django.core.management.base import BaseCommand, CommandError

from memory_core.accounts import grants
from memory_core.accounts.principals import Principal
from memory_core.errors import DomainError, NotFound
from memory_core.models import Scope
from memory_core.models.access import Role


class Command(BaseCommand):
    help = (
        "Give console user USER the role admin or auditor at SCOPE (and so below it). "
        "Granting again changes the role."
    )

    def add_arguments(self, parser):
        parser.add_argument("user", metavar="USER", help="an existing console username")
        parser.add_argument("scope", metavar="SCOPE", help="e.g. tenant:acme")
        parser.add_argument("--role", required=True, choices=Role.values)

    def handle(self, *args, user, scope, role, **options):
        target = Scope.objects.filter(token=scope).first()
        if target is None:
            raise CommandError(f"no scope {scope!r}")
        try:
            grants.grant(user, target, role, principal=Principal.system("cli"))
        except NotFound as error:
            # The command grants; it does not create users.
            raise CommandError(
                f"{error.message}: create the user first, on the console's Users page or "
                "with createsuperuser"
            ) from error
        except DomainError as error:
            raise CommandError(error.message) from error
        self.stdout.write(f"{user} is now {role} of {target.token}.")
