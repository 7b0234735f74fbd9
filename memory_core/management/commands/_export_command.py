"""What export_ledger and export_access share: the file, its format, times, the manifest
beside it, progress, and the access-log row that records the export."""

from abc import ABC, abstractmethod
from datetime import datetime
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from memory_core.accounts.principals import Principal
from memory_core.ledger import access_log, exports
from memory_core.management.progress import Progress


def moment(text: str) -> datetime:
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if value.tzinfo is None:
        raise ValueError("name the time zone (…Z or …+00:00)")
    return value


class ExportCommand(BaseCommand, ABC):
    name = ""  # "ledger" or "access"
    model = None
    columns: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument("file", metavar="FILE")
        parser.add_argument(
            "--format", choices=exports.FORMATS, help="default: from FILE's extension"
        )
        parser.add_argument("--since", type=moment, help="ISO 8601 time, inclusive")
        parser.add_argument("--until", type=moment, help="ISO 8601 time, exclusive")

    @abstractmethod
    def filters(self, options) -> dict:
        """The filters given, by name (written to the manifest)."""

    @abstractmethod
    def rows(self, options):
        """The rows those filters select (unordered: read in keyset batches)."""

    @abstractmethod
    def record(self, row) -> dict:
        """One row as exported."""

    def finish(self, export, manifest) -> None:
        """Add figures to the manifest (the access log's ledger heads)."""

    def handle(self, *args, **options):
        path = Path(options["file"])
        fmt = options["format"] or path.suffix.lstrip(".")
        if fmt not in exports.FORMATS:
            raise CommandError("name the format: --format csv|jsonl (or FILE ending .csv/.jsonl)")
        principal = Principal.system(f"cli:export_{self.name}")
        upto = exports.upto_now(self.model)
        rows = self.rows(options)
        filters = {
            k: (exports.timestamp_text(v) if isinstance(v, datetime) else v)
            for k, v in self.filters(options).items()
        }
        export = exports.Export(
            self.name,
            fmt,
            filters,
            principal.name,
            upto=upto,
            columns=self.columns,
            finish=self.finish,
        )
        total = rows.filter(id__lte=upto).count()
        quiet = options["verbosity"] < 1
        with Progress(total, self.name, self.stderr, quiet=quiet) as progress:
            records = (self.record(r) for r in exports.in_batches(rows, upto))
            manifest = exports.write_files(export, records, path, progress)
        access_log.record(
            principal,
            f"export.{self.name}",
            200,
            count=manifest["rows"],
            detail={"format": fmt, "upto": upto, "complete": True, "sha256": manifest["sha256"]},
        )
        self.stdout.write(
            f"{manifest['rows']} rows to {path} (sha256 {manifest['sha256']}); "
            f"manifest: {exports.manifest_path(path)}"
        )
