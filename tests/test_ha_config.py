"""Patroni's configuration as the project writes it (memory_console/ha/config.py): what makes
an acknowledged write survive the primary's loss, and the URL the app servers connect with."""

from pathlib import Path

from memory_console.database import parse_database_url
from memory_console.ha import config

NODES = [config.Node(f"node{n}", 6000 + n, 8000 + n, Path(f"/srv/ha/node{n}")) for n in (1, 2, 3)]
SECRETS = config.Secrets("su-pw", "repl-pw", "rewind-pw")


def _config(node=NODES[0]):
    return config.patroni_config(
        node, etcd_hosts=["127.0.0.1:2379"], bin_dir=Path("/pg/bin"), secrets=SECRETS
    )


def test_commits_wait_for_a_synchronous_standby_and_only_it_may_be_promoted():
    dcs = _config()["bootstrap"]["dcs"]
    assert dcs["synchronous_mode"] is True
    assert dcs["maximum_lag_on_failover"] <= 1024 * 1024


def test_a_failed_primary_rejoins_through_pg_rewind_never_a_fresh_copy():
    postgresql = _config()["bootstrap"]["dcs"]["postgresql"]
    assert postgresql["use_pg_rewind"] is True
    assert postgresql["parameters"]["wal_log_hints"] == "on"
    assert postgresql["remove_data_directory_on_rewind_failure"] is False
    assert postgresql["remove_data_directory_on_diverged_timelines"] is False


def test_a_crashed_primary_fails_over_at_once_within_patronis_smallest_timings():
    dcs = _config()["bootstrap"]["dcs"]
    assert dcs["primary_start_timeout"] == 0
    # Patroni's own rule: loop_wait + 2 * retry_timeout <= ttl, ttl at least 20.
    assert dcs["ttl"] >= 20
    assert dcs["loop_wait"] + 2 * dcs["retry_timeout"] <= dcs["ttl"]


def test_every_node_shares_the_bootstrap_and_has_its_own_ports_and_directory():
    documents = [_config(node) for node in NODES]
    assert len({repr(d["bootstrap"]) for d in documents}) == 1
    assert len({d["postgresql"]["listen"] for d in documents}) == 3
    assert len({d["restapi"]["listen"] for d in documents}) == 3
    assert len({d["postgresql"]["data_dir"] for d in documents}) == 3
    assert all(d["scope"] == config.CLUSTER_NAME for d in documents)


def test_network_access_requires_a_password():
    hba = _config()["postgresql"]["pg_hba"]
    assert [line for line in hba if line.startswith("host")] == [
        line for line in hba if line.startswith("host") and line.endswith("scram-sha-256")
    ]


def test_the_app_url_lists_every_node_and_keeps_only_the_primary():
    url = config.multi_host_url("memory_app", "p@ss/word", NODES, "memory_console")
    db = parse_database_url(url)
    assert db["HOST"] == "127.0.0.1,127.0.0.1,127.0.0.1"
    assert db["PORT"] == "6001,6002,6003"
    assert db["PASSWORD"] == "p@ss/word"
    assert db["EXTRA_OPTIONS"]["target_session_attrs"] == "read-write"
    standby = parse_database_url(
        config.multi_host_url("memory_app", "x", NODES, "memory_console", target="standby")
    )
    assert standby["EXTRA_OPTIONS"]["target_session_attrs"] == "standby"


def _database_error(sqlstate: str):
    from django.db import OperationalError

    class DriverError(Exception):
        pass

    cause = DriverError("driver")
    cause.sqlstate = sqlstate
    error = OperationalError("wrapped")
    error.__cause__ = cause
    return error


def test_a_write_on_a_demoted_primary_is_a_503_to_retry_not_a_500():
    from memory_console import unavailable

    assert unavailable.classify(_database_error("25006")) == unavailable.UNAVAILABLE
    assert unavailable.classify(_database_error("57P01")) == unavailable.UNAVAILABLE
    assert unavailable.classify(_database_error("42P01")) is None
