"""`export_memories FILE [--scope S]`: live memories out as JSON Lines, import's format.

One object a line, ordered by scope then key:

    {"scope": "team:ops", "key": "units", "text": "…", "pinned": false, "tags": [],
     "user": "alice", "parent": "tenant:acme"}

- `user` (the origin user) is written for a person's memory.
- An agent's memory is exported too (it is live, and an export is also a record), marked
  `"author": "agent"` and without `user`; `import_memories` skips such lines, because
  agents write an actor's own notes themselves.
- `parent` is written when the scope hangs below something other than `global`, so an
  import into an empty database rebuilds the tree one level deep.
- `expires_at` is written for a memory that will expire.

Only live rows: no retired versions, nothing expired. FILE `-` writes to stdout (and the
summary to stderr, so the stream stays pure JSON Lines).
"""

import json

from django.core.management.base import BaseCommand, CommandError

from memory_core.management.progress import Progress
from memory_core.models import Author, Memory, Scope
from memory_core.rules.scopes import GLOBAL
from memory_core.shapes import timestamp


def line_for(memory: Memory) -> dict:
    scope = memory.scope
    line = {
        "scope": scope.token,
        "key": memory.key,
        "text": memory.text,
        "pinned": memory.pinned,
        "tags": list(memory.tags),
    }
    if memory.author == Author.AGENT:
        line["author"] = Author.AGENT
    elif memory.origin_user:
        line["user"] = memory.origin_user
    if (
        scope.parent is not None
        and scope.parent.token != GLOBAL
        and not scope.token.startswith("actor:")
    ):
        line["parent"] = scope.parent.token
    if memory.expires_at is not None:
        line["expires_at"] = timestamp(memory.expires_at)
    return line


class Command(BaseCommand):
    help = (
        "Export live memories as JSON Lines to FILE ('-' for stdout), ordered by scope then "
        "key, in the format import_memories reads: scope, key, text, pinned, tags, and user "
        "(the origin user) for people's memories; parent when the scope is not directly "
        "under global; expires_at when set. Agents' memories are included but marked "
        '"author": "agent", and import_memories skips them. --scope S exports only S.'
    )

    def add_arguments(self, parser):
        parser.add_argument("file", metavar="FILE", help="a .jsonl path, or - for stdout")
        parser.add_argument("--scope", metavar="S", help="only the memories held at scope S")

    def handle(self, *args, file, scope=None, **options):
        rows = Memory.objects.live().select_related("scope__parent")
        if scope is not None:
            if not Scope.objects.filter(token=scope).exists():
                raise CommandError(f"no scope {scope!r}")
            rows = rows.filter(scope__token=scope)
        rows = rows.order_by("scope__token", "key")
        to_stdout = file == "-"
        summary = self.stderr if to_stdout else self.stdout
        quiet = options["verbosity"] < 1
        try:
            handle = None if to_stdout else open(file, "w", encoding="utf-8")
        except OSError as error:
            raise CommandError(f"cannot write {file}: {error.strerror}") from error
        counts = {Author.HUMAN: 0, Author.AGENT: 0}
        try:
            with Progress(rows.count(), "export", self.stderr, quiet=quiet) as progress:
                for memory in rows.iterator(chunk_size=2000):
                    text = json.dumps(line_for(memory), ensure_ascii=False) + "\n"
                    if handle is None:
                        self.stdout.write(text, ending="")
                    else:
                        handle.write(text)
                    counts[memory.author] += 1
                    progress.advance()
        finally:
            if handle is not None:
                handle.close()
        total = counts[Author.HUMAN] + counts[Author.AGENT]
        summary.write(
            f"Exported {total} live memor{'y' if total == 1 else 'ies'} "
            f"({counts[Author.HUMAN]} by people, {counts[Author.AGENT]} by agents) "
            f"to {'stdout' if to_stdout else file}."
        )
