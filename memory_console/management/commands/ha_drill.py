"""`ha_drill [--dir DIR] [--nodes 3] [--seconds S] [--writers N] [--json FILE] [--keep]` and
`ha_drill --stop DIR`: a PostgreSQL cluster run by Patroni with etcd, two app servers on it,
writers busy, the primary killed with SIGKILL, a replica killed, the old primary brought
back through pg_rewind; then every acknowledged write is looked up on the final primary.
memory_console/ha/drill.py; docs/operators/high-availability.md."""

import json
import shutil
import tempfile
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from memory_console.ha import drill
from memory_console.ha.cluster import Cluster, ClusterError


class Command(BaseCommand):
    help = (
        "Drill a failover: Patroni + etcd nodes under load, SIGKILL the primary, kill a "
        "replica, rejoin the old primary (pg_rewind); report lost and duplicated writes."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--dir",
            default=None,
            help="where the cluster lives (default: a new temporary directory)",
        )
        parser.add_argument(
            "--nodes", type=int, default=3, help="PostgreSQL nodes (at least 2; default 3)"
        )
        parser.add_argument(
            "--seconds", type=float, default=60.0, help="how long the load runs (default 60)"
        )
        parser.add_argument("--writers", type=int, default=4, help="concurrent writers (default 4)")
        parser.add_argument(
            "--json", default=None, metavar="FILE", help="write the result as JSON here"
        )
        parser.add_argument(
            "--keep",
            action="store_true",
            help="leave the cluster and app servers running (stop them with --stop DIR)",
        )
        parser.add_argument(
            "--stop", default=None, metavar="DIR", help="stop what a --keep run left running in DIR"
        )

    def handle(self, *args, **options):
        if options["stop"]:
            try:
                Cluster.load(Path(options["stop"])).stop()
            except ClusterError as error:
                raise CommandError(str(error)) from error
            self.stdout.write(f"stopped the cluster in {options['stop']}")
            return
        if options["nodes"] < 2:
            raise CommandError("--nodes must be at least 2 (a primary and a synchronous standby)")
        if options["seconds"] < 20:
            raise CommandError(
                "--seconds must be at least 20 (three faults happen during the load)"
            )
        if options["writers"] < 1:
            raise CommandError("--writers must be at least 1")
        if shutil.which("etcd") is None:
            raise CommandError(
                "etcd not found: install Debian's etcd-server (apt-get install etcd-server)"
            )
        try:
            import patroni  # noqa: F401
        except ImportError:
            raise CommandError('Patroni is not installed: pip install -e ".[ha]"') from None
        directory = Path(options["dir"] or tempfile.mkdtemp(prefix="mc-ha-", dir="/tmp"))
        try:
            result = drill.run(
                directory,
                nodes=options["nodes"],
                seconds=options["seconds"],
                writers=options["writers"],
                keep=options["keep"],
                say=lambda line: self.stdout.write(line),
            )
        except ClusterError as error:
            raise CommandError(f"{error} (logs in {directory})") from error
        text = json.dumps(result, indent=2)
        if options["json"]:
            Path(options["json"]).write_text(text + "\n")
        self.stdout.write(text)
        if options["keep"]:
            self.stdout.write(f"kept running; stop with: manage.py ha_drill --stop {directory}")
        if (
            result["lost"]
            or result["duplicated"]
            or result["status_500"]
            or not result["ledger_verified"]
        ):
            raise CommandError(
                "the drill found lost or duplicated writes, a 500, or a broken ledger"
            )
