"""`create_api_key --name NAME --reach SCOPE`: a new key for a host application.

The secret is printed once, alone on the last line of stdout, so a script can take it with
`| tail -n 1`; only its hash is stored.
"""

from django.core.management.base import BaseCommand, CommandError

from memory_core import keys
from memory_core.errors import DomainError
from memory_core.models import Scope
from memory_core.principals import Principal


class Command(BaseCommand):
    help = (
        "Create an API key whose reach is SCOPE (it acts for actors whose chain contains "
        "SCOPE). Prints the secret alone on the last line of stdout; it is never shown again."
    )

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True, help="what the key is for, e.g. 'acme host'")
        parser.add_argument("--reach", required=True, metavar="SCOPE", help="e.g. tenant:acme")

    def handle(self, *args, name, reach, **options):
        scope = Scope.objects.filter(token=reach).first()
        if scope is None:
            raise CommandError(
                f"no scope {reach!r}: a key's reach must be an existing scope "
                "(global, a tenant or team that actors belong to)"
            )
        try:
            key, secret = keys.create_api_key(name, scope, principal=Principal.system("cli"))
        except DomainError as error:
            raise CommandError(error.message) from error
        self.stdout.write(f"Created API key {key.uid} {key.name!r} reaching {scope.token}.")
        self.stdout.write("Its secret follows; store it now, it is not shown again:")
        self.stdout.write(secret)
