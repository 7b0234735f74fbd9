"""Settings helpers fail loudly on bad values; DATABASE_URL forms parse as documented."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from memory_console.database import parse_database_url
from memory_console.env import env_bool, env_int, env_list


def test_env_bool_reads_the_usual_spellings_and_refuses_others(monkeypatch):
    monkeypatch.setenv("FLAG", "yes")
    assert env_bool("FLAG") is True
    monkeypatch.setenv("FLAG", "0")
    assert env_bool("FLAG", True) is False
    monkeypatch.setenv("FLAG", "maybe")
    with pytest.raises(ImproperlyConfigured, match="FLAG"):
        env_bool("FLAG")


def test_env_int_checks_type_and_range(monkeypatch):
    monkeypatch.delenv("LINES", raising=False)
    assert env_int("LINES", 20) == 20
    monkeypatch.setenv("LINES", "twenty")
    with pytest.raises(ImproperlyConfigured, match="LINES must be an integer"):
        env_int("LINES", 20)
    monkeypatch.setenv("LINES", "0")
    with pytest.raises(ImproperlyConfigured, match="at least 1"):
        env_int("LINES", 20, minimum=1)


def test_env_list_splits_on_commas_and_refuses_empty_items(monkeypatch):
    monkeypatch.setenv("HOSTS", "a.example, b.example")
    assert env_list("HOSTS", []) == ["a.example", "b.example"]
    monkeypatch.setenv("HOSTS", "a.example,,b")
    with pytest.raises(ImproperlyConfigured):
        env_list("HOSTS", [])


def test_database_url_with_host_and_port():
    db = parse_database_url("postgresql://app:s%40cret@db.internal:6543/memories")
    assert (db["NAME"], db["USER"], db["PASSWORD"], db["HOST"], db["PORT"]) == (
        "memories",
        "app",
        "s@cret",
        "db.internal",
        "6543",
    )


def test_database_url_with_a_socket_directory():
    db = parse_database_url("postgresql://postgres:@/memory_console?host=/tmp/pg sock")
    assert (db["NAME"], db["USER"], db["HOST"], db["PORT"]) == (
        "memory_console",
        "postgres",
        "/tmp/pg sock",
        "",
    )


@pytest.mark.parametrize("url", ["mysql://x@h/db", "postgresql://x@h/", "postgresql://x@h:port/db"])
def test_bad_database_urls_are_refused(url):
    with pytest.raises(ImproperlyConfigured):
        parse_database_url(url)
