"""Patroni's configuration for the nodes of one cluster, and the URLs the app connects with.

Pure: it names ports and directories and writes nothing. What it encodes:

- synchronous replication (`synchronous_mode: true`): the primary acknowledges a commit once
  one standby has it, so the write the server answered 201 for survives the primary's loss;
  only a synchronous standby may be promoted;
- `use_pg_rewind` (with `wal_log_hints`): a failed primary rejoins as a replica by rewinding
  its data directory, never by a fresh base backup (`remove_data_directory_on_*` off);
- `primary_start_timeout: 0`: a primary whose PostgreSQL crashed is failed over at once
  (the synchronous standby has every acknowledged write) instead of restarted in place;
- the smallest timings Patroni accepts (ttl 20 s, loop_wait 1 s, retry_timeout 3 s).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

CLUSTER_NAME = "memory-console"
SUPERUSER = "postgres"
REPLICATION_USER = "replicator"
REWIND_USER = "rewinder"
LOOPBACK = "127.0.0.1"


@dataclass(frozen=True)
class Node:
    name: str
    pg_port: int
    rest_port: int
    root: Path  # the node's directory: data/, its socket, patroni.yml, its log

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def config_path(self) -> Path:
        return self.root / "patroni.yml"

    @property
    def rest_url(self) -> str:
        return f"http://{LOOPBACK}:{self.rest_port}"


@dataclass(frozen=True)
class Secrets:
    superuser: str
    replication: str
    rewind: str


def patroni_config(
    node: Node,
    *,
    etcd_hosts: list[str],
    bin_dir: Path,
    secrets: Secrets,
    host: str = LOOPBACK,
    allowed_network: str = "127.0.0.1/32",
) -> dict:
    """One node's patroni.yml as a dict. Every node gets the same `bootstrap` section; the
    first to take the leader key in etcd runs initdb, the others copy it (pg_basebackup)."""
    hba_method = "scram-sha-256"
    return {
        "scope": CLUSTER_NAME,
        "name": node.name,
        "log": {"level": "INFO", "dir": str(node.root / "log"), "file_num": 2},
        "restapi": {
            "listen": f"{host}:{node.rest_port}",
            "connect_address": f"{host}:{node.rest_port}",
        },
        "etcd3": {"hosts": etcd_hosts},
        "bootstrap": {
            "dcs": {
                "ttl": 20,
                "loop_wait": 1,
                "retry_timeout": 3,
                "maximum_lag_on_failover": 1024 * 1024,
                "primary_start_timeout": 0,
                "synchronous_mode": True,
                "postgresql": {
                    "use_pg_rewind": True,
                    "use_slots": True,
                    "remove_data_directory_on_rewind_failure": False,
                    "remove_data_directory_on_diverged_timelines": False,
                    "parameters": {
                        "wal_level": "replica",
                        "hot_standby": "on",
                        "wal_log_hints": "on",
                        "max_wal_senders": 10,
                        "max_replication_slots": 10,
                        "wal_keep_size": "256MB",
                        "max_connections": 100,
                        "password_encryption": "scram-sha-256",
                    },
                },
            },
            "initdb": [{"encoding": "UTF8"}, {"locale": "C"}, "data-checksums"],
        },
        "postgresql": {
            "listen": f"{host}:{node.pg_port}",
            "connect_address": f"{host}:{node.pg_port}",
            "data_dir": str(node.data_dir),
            "bin_dir": str(bin_dir),
            "pgpass": str(node.root / "pgpass"),
            "authentication": {
                "superuser": {"username": SUPERUSER, "password": secrets.superuser},
                "replication": {"username": REPLICATION_USER, "password": secrets.replication},
                "rewind": {"username": REWIND_USER, "password": secrets.rewind},
            },
            "parameters": {"unix_socket_directories": str(node.root)},
            "pg_hba": [
                "local all all trust",
                f"host replication {REPLICATION_USER} {allowed_network} {hba_method}",
                f"host all all {allowed_network} {hba_method}",
            ],
        },
        "tags": {"nofailover": False, "noloadbalance": False, "clonefrom": False},
    }


def multi_host_url(
    user: str,
    password: str,
    nodes: list[Node],
    database: str,
    *,
    target: str = "read-write",
    host: str = LOOPBACK,
) -> str:
    """libpq's multi-host URL: a connection tries each node in turn and keeps the first
    whose role matches `target` (`read-write`: the primary; `standby`: a replica)."""
    hosts = ",".join(f"{host}:{node.pg_port}" for node in nodes)
    credentials = f"{quote(user, safe='')}:{quote(password, safe='')}"
    return (
        f"postgresql://{credentials}@{hosts}/{quote(database, safe='')}"
        f"?target_session_attrs={target}&connect_timeout=2"
    )
