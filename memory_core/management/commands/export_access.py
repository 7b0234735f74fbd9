"""`export_access FILE [--format csv|jsonl] [filters]`: the access log and its manifest,
for operators (every row; the console's /exports/access.* is the grant-limited form)."""

from memory_core.ledger import exports
from memory_core.management.commands._export_command import ExportCommand
from memory_core.models import AccessLog


class Command(ExportCommand):
    help = (
        "Write access-log rows (oldest first) to FILE as CSV or JSON Lines, and "
        "FILE.manifest.json (filters, count, the ledger heads at export time, SHA-256 of FILE). "
        "Filters: --principal, --actor, --action, --outcome, --refused, --since/--until."
    )
    name = "access"
    model = AccessLog
    columns = exports.ACCESS_COLUMNS

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--principal")
        parser.add_argument("--actor")
        parser.add_argument("--action")
        parser.add_argument("--outcome", type=int)
        parser.add_argument("--refused", action="store_true")

    def filters(self, options) -> dict:
        names = ("principal", "actor", "action", "outcome", "refused", "since", "until")
        return {name: options[name] for name in names}

    def rows(self, options):
        return exports.filter_access(AccessLog.objects.all(), **self.filters(options))

    def record(self, row) -> dict:
        return exports.access_record(row)

    def finish(self, export, manifest) -> None:
        manifest["ledger_heads"] = exports.ledger_heads()
