"""`export_openapi [PATH]`: the agent API's OpenAPI document, as /api/v1/openapi.json serves
it, written to PATH (or stdout). Needs no database.

The TypeScript client's types are generated from it (clients/typescript/openapi.json):

    python manage.py export_openapi clients/typescript/openapi.json
    npm --prefix clients/typescript run generate
"""

import json
from pathlib import Path

from django.core.management.base import BaseCommand

from memory_console.api import api


def openapi_text() -> str:
    """The document as the file holds it: indented, one trailing newline."""
    return json.dumps(api.get_openapi_schema(), indent=2, ensure_ascii=False) + "\n"


class Command(BaseCommand):
    help = "Write the agent API's OpenAPI document to PATH (or stdout)."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument("path", nargs="?", help="where to write it; stdout when left out")

    def handle(self, *args, path=None, **options):
        text = openapi_text()
        if path is None:
            self.stdout.write(text, ending="")
        else:
            Path(path).write_text(text, encoding="utf-8")
