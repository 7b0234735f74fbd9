"""`create_api_key --name NAME --reach SCOPE [--actor REF] [--expires WHEN]`: a new key for a
host application.

With `--expires`, the key authenticates as nothing from then on: WHEN is a number of days
(`90`), an ISO date (`2027-01-31`, the start of that day in the server's time zone) or an
ISO date-time.

With `--actor`, the key is bound to that one actor: it acts for it alone, in the API and over
MCP, whatever actor a request names (for an MCP client that can only be given a key and a
URL). REF is named as the key names actors: relative to the reach's tenant (`u1`), or
qualified (`acme/u1`).

The secret is printed once, alone on the last line of stdout, so a script can take it with
`| tail -n 1`; only its hash is stored.
"""

from datetime import datetime, time, timedelta

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from memory_core import actors
from memory_core.accounts import keys
from memory_core.accounts.principals import Principal
from memory_core.errors import DomainError, NotFound
from memory_core.models import Scope


class Command(BaseCommand):
    help = (
        "Create an API key whose reach is SCOPE (it acts for actors whose chain contains "
        "SCOPE). Prints the secret alone on the last line of stdout; it is never shown again."
    )

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True, help="what the key is for, e.g. 'acme host'")
        parser.add_argument("--reach", required=True, metavar="SCOPE", help="e.g. tenant:acme")
        parser.add_argument(
            "--actor",
            metavar="REF",
            default=None,
            help=(
                "bind the key to this one actor (u1, relative to the reach's tenant, or "
                "acme/u1); registered with the reach if it is new"
            ),
        )

        parser.add_argument(
            "--expires",
            metavar="WHEN",
            default=None,
            help="days from now (90), or an ISO date or date-time; default: never",
        )

    def handle(self, *args, name, reach, actor=None, expires=None, **options):
        expires_at = _expiry(expires) if expires else None
        scope = Scope.objects.filter(token=reach).first()
        if scope is None:
            raise CommandError(
                f"no scope {reach!r}: a key's reach must be an existing scope "
                "(global, a tenant or team that actors belong to)"
            )
        try:
            key, secret = keys.create_api_key(
                name,
                scope,
                principal=Principal.system("cli"),
                actor_ref=actor,
                expires_at=expires_at,
            )
        except NotFound as error:
            raise CommandError(f"{error.message} within the reach {scope.token}") from error
        except DomainError as error:
            raise CommandError(error.message) from error
        if key.actor is None:
            self.stdout.write(f"Created API key {key.uid} {key.name!r} reaching {scope.token}.")
        else:
            chain = ", ".join(actors.chain_of(key.actor))
            self.stdout.write(
                f"Created API key {key.uid} {key.name!r} reaching {scope.token}, bound to the "
                f"actor {key.actor.ref} (chain: {chain})."
            )
        if key.expires_at is not None:
            self.stdout.write(f"It expires at {key.expires_at.isoformat()}.")
        self.stdout.write("Its secret follows; store it now, it is not shown again:")
        self.stdout.write(secret)


def _expiry(value: str) -> datetime:
    value = value.strip()
    if value.isdigit():
        return timezone.now() + timedelta(days=int(value))
    try:
        moment = parse_datetime(value)
        day = None if moment else parse_date(value)
    except ValueError:
        moment = day = None
    if moment is None and day is not None:
        moment = datetime.combine(day, time.min)
    if moment is None:
        raise CommandError(f"--expires {value!r}: give days (90), a date or an ISO date-time")
    return timezone.make_aware(moment) if timezone.is_naive(moment) else moment
