"""`prune_history --max-messages N`: keep the N newest messages of each thread.

A thread left with no message is removed. Memories are never touched: one learned in a
pruned conversation keeps its origin, which then reads "origin no longer resolves".
"""

from django.core.management.base import BaseCommand, CommandError

from memory_core import transcripts
from memory_core.accounts.principals import Principal
from memory_core.errors import DomainError
from memory_core.management.progress import Progress
from memory_core.models import Thread


def non_negative(value: str) -> int:
    number = int(value)
    if number < 0:
        raise ValueError(value)
    return number


class Command(BaseCommand):
    help = (
        "Keep at most N newest messages per conversation thread and remove threads left "
        "empty. Memories are never deleted by this."
    )

    def add_arguments(self, parser):
        parser.add_argument("--max-messages", type=non_negative, required=True, metavar="N")

    def handle(self, *args, max_messages, **options):
        progress = Progress(
            Thread.objects.count(), "threads", self.stderr, quiet=options["verbosity"] < 1
        )
        try:
            with progress:
                messages, threads = transcripts.prune_history(
                    max_messages, principal=Principal.system("cli"), progress=progress
                )
        except DomainError as error:
            raise CommandError(error.message) from error
        self.stdout.write(
            f"Pruned {messages} message(s) and removed {threads} empty thread(s); "
            f"at most {max_messages} kept per thread."
        )
