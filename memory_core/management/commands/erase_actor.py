"""`erase_actor REF [--yes]`: erase the person actor REF stands for (right to erasure).

REF is qualified (`acme/u1`; a bare `u1` outside every tenant). Every memory at the actor's
scope is forgotten, the text of its stored turns erased, its conversations deleted and the
API keys bound to it revoked (memory_core/erasure.py says what stays, and why). Without
`--yes` the operator confirms by typing the ref again. Prints the report of what was removed.
"""

from django.core.management.base import BaseCommand, CommandError

from memory_core import erasure
from memory_core.accounts.principals import Principal
from memory_core.errors import DomainError
from memory_core.models import Actor


class Command(BaseCommand):
    help = (
        "Erase everything held about actor REF (qualified, e.g. acme/u1): its memories, the "
        "text of its stored turns, its conversations; revoke its bound API keys. Cannot be "
        "undone; the ledger keeps the counts."
    )

    def add_arguments(self, parser):
        parser.add_argument("ref", metavar="REF", help="the actor's qualified ref, e.g. acme/u1")
        parser.add_argument(
            "--yes", action="store_true", help="do not ask for the ref to be typed again"
        )

    def handle(self, *args, ref, yes=False, **options):
        actor = Actor.objects.select_related("scope").filter(ref=ref).first()
        if actor is None:
            raise CommandError(f"no actor {ref!r} (name it qualified, e.g. acme/u1)")
        if not yes:
            typed = input(
                f"This erases every memory, stored turn text, conversation and bound key of "
                f"{actor.ref}; it cannot be undone.\nType the ref {actor.ref} to confirm: "
            )
            if typed.strip() != actor.ref:
                raise CommandError("the ref was not typed exactly; nothing was erased")
        try:
            erased = erasure.erase_actor(actor, principal=Principal.system("cli"))
        except DomainError as error:
            raise CommandError(error.message) from error
        self.stdout.write(erased.report(actor.ref))
