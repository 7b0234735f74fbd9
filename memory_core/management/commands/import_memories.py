"""`import_memories FILE`: publish human-authored memories from JSON Lines.

One object a line:

    {"scope": "team:ops", "key": "units", "text": "report distances in kilometres",
     "pinned": true, "tags": ["policy"], "user": "alice", "parent": "tenant:acme",
     "expires_at": "2030-01-01T00:00:00Z"}

`scope`, `key` and `text` are required. Each line is one `writes.publish`, the service the
console uses, so it supersedes the live memory at that (scope, key) and is ledgered like a
console edit. Decisions:

- A scope that does not exist is created under `parent` when given (itself created under
  `global` if missing), else under `global`. An existing scope is never moved.
- `actor:…` scopes are refused: what is held there is an actor's own, written by agents
  through the API.
- `user` becomes the memory's origin user (the person who stated it); without it the
  origin is the operator, `cli:import`. The ledger and access log name the importing
  principal, `cli:<user>` or `cli:import`.
- `"author": "agent"` marks a line that `export_memories` wrote for an agent's memory:
  it is skipped (reported, not a failure), since agents write those themselves.
- `expires_at` (ISO 8601, in the future) is kept so an export round-trips.
- Every bad line is reported with its number and skipped; the rest are imported. The
  command exits non-zero when any line failed. Blank lines are ignored.
"""

import json
import sys
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from memory_core import actors, writes
from memory_core.accounts.principals import Principal
from memory_core.errors import DomainError
from memory_core.management.progress import Progress
from memory_core.models import Author, Scope
from memory_core.rules.scopes import GLOBAL, is_valid_scope

FIELDS = frozenset({"scope", "key", "text", "pinned", "tags", "user", "parent", "author"})
OPTIONAL_FIELDS = frozenset({"expires_at"})
REQUIRED = ("scope", "key", "text")
MAX_USER_CHARS = 150  # Memory.origin_user


class LineError(Exception):
    """A line that cannot be imported; its message is shown after the line number."""


@dataclass(frozen=True)
class Line:
    scope: str
    key: str
    text: str
    pinned: bool
    tags: list[str]
    user: str | None
    parent: str | None
    expires_at: datetime | None
    by_agent: bool


def parse(raw: bytes) -> Line | None:
    """The line's memory, None for a blank line; LineError says what is wrong."""
    try:
        source = raw.decode("utf-8").lstrip("\ufeff")
    except UnicodeDecodeError as error:
        raise LineError(f"not UTF-8 ({error.reason} at byte {error.start})") from None
    if not source.strip():
        return None
    try:
        data = json.loads(source)
    except json.JSONDecodeError as error:
        raise LineError(f"invalid JSON: {error.msg} (column {error.colno})") from None
    if not isinstance(data, dict):
        raise LineError("each line must be a JSON object")
    unknown = set(data) - FIELDS - OPTIONAL_FIELDS
    if unknown:
        raise LineError(f"unknown field(s): {', '.join(sorted(unknown))}")
    missing = [name for name in REQUIRED if name not in data]
    if missing:
        raise LineError(f"missing field(s): {', '.join(missing)}")
    for name in ("scope", "key", "text"):
        if not isinstance(data[name], str):
            raise LineError(f"{name} must be a string")
    author = data.get("author", Author.HUMAN)
    if author not in Author.values:
        raise LineError(f"author must be one of {', '.join(Author.values)}")
    return Line(
        scope=_scope_token(data["scope"], "scope"),
        key=data["key"],
        text=data["text"],
        pinned=_pinned(data.get("pinned")),
        tags=_tags(data.get("tags")),
        user=_user(data.get("user")),
        parent=_scope_token(data["parent"], "parent") if data.get("parent") is not None else None,
        expires_at=_expiry(data.get("expires_at")),
        by_agent=author == Author.AGENT,
    )


def _scope_token(token, field: str) -> str:
    if not is_valid_scope(token):
        raise LineError(f"{field} {token!r} is not a scope token (kind:id, e.g. team:ops)")
    return token


def _pinned(value) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise LineError("pinned must be true or false")
    return value


def _tags(value) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(tag, str) for tag in value):
        raise LineError("tags must be a list of strings")
    return value


def _user(value) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_USER_CHARS:
        raise LineError(f"user must be a username of 1-{MAX_USER_CHARS} characters")
    if not value.isprintable():
        raise LineError("user must not contain control characters")
    return value


def _expiry(value) -> datetime | None:
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        moment = None
    if moment is None:
        raise LineError("expires_at must be an ISO 8601 date-time")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    if moment <= timezone.now():
        raise LineError("expires_at is in the past: the memory would never be live")
    return moment


class Importer:
    """Publishes parsed lines, creating scopes as needed; remembers what it did."""

    def __init__(self, report):
        self.report = report  # report(line_number, message): a note for the operator
        self.counts = Counter()
        self._global = actors.global_scope()
        self._system = Principal.system("cli:import")

    def publish(self, number: int, line: Line) -> None:
        if line.by_agent:
            self.counts["agent"] += 1
            self.report(number, "skipped: an agent's memory (agents write those themselves)")
            return
        if line.scope.startswith("actor:") or (line.parent or "").startswith("actor:"):
            raise LineError("actor scopes are not imported: agents write an actor's own notes")
        writes.check_key_and_fact(line.key, line.text)
        tags = writes.check_tags(line.tags)
        scope = self._scope(number, line)
        memory = writes.publish(
            scope,
            line.key,
            line.text,
            principal=self._principal(line.user),
            pinned=line.pinned,
            tags=tags,
            expires_at=line.expires_at,
        )
        self.counts["imported"] += 1
        if memory.supersedes_id is not None:
            self.counts["superseded"] += 1

    def _scope(self, number: int, line: Line) -> Scope:
        scope = Scope.objects.select_related("parent").filter(token=line.scope).first()
        if scope is not None:
            wanted = line.parent or GLOBAL
            if line.parent and scope.parent and scope.parent.token != wanted:
                self.report(
                    number,
                    f"note: {scope.token} already exists under {scope.parent.token}; "
                    f"not moved under {wanted}",
                )
            return scope
        parent = self._global
        if line.parent and line.parent != GLOBAL:
            parent, created = actors.ensure_scope(line.parent, self._global, principal=self._system)
            self.counts["scopes"] += created
        scope, created = actors.ensure_scope(line.scope, parent, principal=self._system)
        self.counts["scopes"] += created
        return scope

    def _principal(self, username: str | None) -> Principal:
        if username is None:
            return Principal.system("cli:import")
        # The memory's origin names the stated person, whether or not they have a console
        # account here (an export from another deployment names its people).
        return Principal.system(f"cli:{username}", on_behalf_of=username)


class Command(BaseCommand):
    help = (
        "Import human-authored memories from a JSON Lines FILE ('-' for stdin), one "
        'object a line: {"scope", "key", "text", "pinned"?, "tags"?, "user"?, "parent"?, '
        '"expires_at"?}. Each line is published as a console edit would be (superseding the '
        "live memory at that scope and key, and ledgered). Unknown scopes are created under "
        '\'parent\' or global; actor: scopes are refused; lines marked "author": "agent" '
        "(as export_memories writes agents' memories) are skipped. Bad lines are reported by "
        "number and skipped; the exit status is non-zero if any line failed."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", metavar="FILE", help="a .jsonl file, or - for stdin")

    def handle(self, *args, file, **options):
        total, raw_lines = self._lines(file)
        failures = []

        def report(number, message):
            self.stderr.write(f"line {number}: {message}", style_func=_plain)

        importer = Importer(report)
        quiet = options["verbosity"] < 1
        with Progress(total, "import", self.stderr, quiet=quiet) as progress:
            for number, raw in enumerate(raw_lines, start=1):
                try:
                    line = parse(raw)
                    if line is not None:
                        importer.publish(number, line)
                except (LineError, DomainError) as error:
                    failures.append(number)
                    self.stderr.write(f"line {number}: {error}")
                progress.advance()
        counts = importer.counts
        self.stdout.write(
            f"Imported {counts['imported']} memor{'y' if counts['imported'] == 1 else 'ies'} "
            f"({counts['superseded']} superseding a live one); "
            f"created {counts['scopes']} scope(s); skipped {counts['agent']} agent line(s); "
            f"{len(failures)} line(s) failed."
        )
        if failures:
            shown = ", ".join(map(str, failures[:20])) + (", …" if len(failures) > 20 else "")
            raise CommandError(f"{len(failures)} line(s) were not imported: {shown}")

    def _lines(self, file: str):
        """(line count, iterator of raw lines). A file is counted first, then streamed."""
        if file == "-":
            lines = _split(sys.stdin.buffer)
            return len(lines), iter(lines)
        try:
            with open(file, "rb") as handle:
                total = sum(1 for _ in handle)
            return total, _stream(file)
        except OSError as error:
            raise CommandError(f"cannot read {file}: {error.strerror}") from error


# Lines are read as bytes, split on "\n" only: a bad encoding is then one bad line, not a
# crash, and a stray U+2028 inside a fact is refused by the fact check, not split in two.
def _split(handle) -> list[bytes]:
    return [raw.rstrip(b"\r\n") for raw in handle]


def _stream(path: str):
    with open(path, "rb") as handle:
        for raw in handle:
            yield raw.rstrip(b"\r\n")


def _plain(text: str) -> str:
    return text
