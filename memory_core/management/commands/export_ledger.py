"""`export_ledger FILE [--format csv|jsonl] [filters]`: the ledger and its manifest, for
operators (every stream; the console's /exports/ledger.* is the grant-limited form)."""

from memory_core.ledger import exports
from memory_core.management.commands._export_command import ExportCommand
from memory_core.models import LedgerEvent


class Command(ExportCommand):
    help = (
        "Write ledger events (oldest first) to FILE as CSV or JSON Lines, and FILE.manifest.json "
        "(filters, counts, covering head hashes per stream, SHA-256 of FILE). Filters: --stream, "
        "--scope, --kind, --principal, --since/--until, --seq-from/--seq-to."
    )
    name = "ledger"
    model = LedgerEvent
    columns = exports.LEDGER_COLUMNS

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--stream")
        parser.add_argument("--scope")
        parser.add_argument("--kind")
        parser.add_argument("--principal")
        parser.add_argument("--seq-from", type=int)
        parser.add_argument("--seq-to", type=int)

    def filters(self, options) -> dict:
        names = ("kind", "scope", "principal", "since", "until", "stream", "seq_from", "seq_to")
        return {name: options[name] for name in names}

    def rows(self, options):
        return exports.filter_ledger(LedgerEvent.objects.all(), **self.filters(options))

    def record(self, row) -> dict:
        return exports.ledger_record(row)
