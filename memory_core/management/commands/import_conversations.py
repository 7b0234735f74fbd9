"""`import_conversations FILE --format chatgpt|claude --actor REF [--extract]`: conversations
from a chat export, as threads of the actor (cold start for capture).

FILE is the export's `conversations.json`, or the export's `.zip` (which holds it). ChatGPT's
conversations become threads `chatgpt-<conversation id>`, Claude's `claude-<uuid>`, each with
its messages in order (memory_core/capture/chat_exports.py says what is read). The whole
file is read and checked first: a malformed one stops with an error naming the first bad
record, and nothing of it is imported. Then each conversation is imported in one
transaction, so none is ever left half-imported; importing the same file again adds
nothing. With --extract, each thread that gained messages is queued for extraction (a
`capture_worker`, or `serve` with extraction on, drains the queue).
"""

from django.core.management.base import BaseCommand, CommandError

from memory_core.accounts.principals import Principal
from memory_core.capture import chat_exports, extractor, queue
from memory_core.capture.conversations import Imported, import_conversation, imported
from memory_core.errors import DomainError
from memory_core.management.progress import Progress
from memory_core.models import Actor


class Command(BaseCommand):
    help = (
        "Import conversations from a ChatGPT or Claude export (conversations.json, or the "
        "export's .zip) as threads of actor REF: chatgpt-<id> / claude-<uuid>. A malformed "
        "file imports nothing; importing again adds nothing. --extract queues each new "
        "thread for capture."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", metavar="FILE", help="conversations.json or the export .zip")
        parser.add_argument("--format", required=True, choices=chat_exports.FORMATS)
        parser.add_argument(
            "--actor", required=True, metavar="REF", help="qualified actor ref, e.g. acme/u1"
        )
        parser.add_argument(
            "--extract", action="store_true", help="queue each imported thread for capture"
        )

    def handle(self, *args, file, format, actor, extract, **options):
        owner = Actor.objects.select_related("scope").filter(ref=actor).first()
        if owner is None:
            raise CommandError(f"no actor {actor!r} (name it qualified, e.g. acme/u1)")
        if owner.erased_at is not None:
            raise CommandError(f"actor {actor!r} was erased; nothing was imported")
        if extract and not extractor.enabled():
            raise CommandError("--extract needs extraction on (MEMORY_EXTRACTOR=http)")
        try:
            found = chat_exports.conversations(chat_exports.load(file), format)
        except chat_exports.BadExport as error:
            raise CommandError(f"{error}; nothing was imported") from None
        principal = Principal.system("cli:import")
        counts = Imported()
        queued = 0
        quiet = options["verbosity"] < 1
        with Progress(len(found), "conversations", self.stderr, quiet=quiet) as progress:
            for conversation in found:
                if not conversation.messages:
                    counts.empty += 1
                else:
                    try:
                        added = import_conversation(owner, conversation, principal=principal)
                    except DomainError as error:
                        raise CommandError(error.message) from error
                    if added:
                        counts.threads += 1
                        counts.messages += added
                        if extract:
                            queued += queue.enqueue(owner, conversation.thread_ref)
                    else:
                        counts.unchanged += 1
                progress.advance()
        imported(owner, counts, principal=principal, fmt=format)
        self.stdout.write(
            f"Imported {counts.messages} message(s) into {counts.threads} conversation(s) of "
            f"{owner.ref}; {counts.unchanged} already imported; {counts.empty} without text"
            + (f"; {queued} queued for extraction." if extract else ".")
        )
