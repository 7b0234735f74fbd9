"""Settings helpers fail loudly on bad values; DATABASE_URL forms parse as documented, and
DATABASE_OWNER_URL names the migrating role of the same database; without them, the
embedded server's URLs, which start nothing (tests/test_database_start.py)."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from memory_console import database
from memory_console.database import app_role, database_urls, parse_database_url
from memory_console.env import env_bool, env_choice, env_float, env_int, env_list


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


def test_env_float_checks_type_finiteness_and_range(monkeypatch):
    monkeypatch.setenv("SECONDS", "1.5")
    assert env_float("SECONDS", 2.0) == 1.5
    for bad, message in [("soon", "a number"), ("nan", "finite"), ("inf", "finite")]:
        monkeypatch.setenv("SECONDS", bad)
        with pytest.raises(ImproperlyConfigured, match=message):
            env_float("SECONDS", 2.0)
    monkeypatch.setenv("SECONDS", "0.01")
    with pytest.raises(ImproperlyConfigured, match="at least 0.05"):
        env_float("SECONDS", 2.0, minimum=0.05)


def test_env_choice_takes_one_of_its_choices_in_any_case(monkeypatch):
    monkeypatch.setenv("KIND", " HTTP ")
    assert env_choice("KIND", "none", ("http", "none")) == "http"
    monkeypatch.setenv("KIND", "grpc")
    with pytest.raises(ImproperlyConfigured, match="KIND must be one of http, none"):
        env_choice("KIND", "none", ("http", "none"))


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


APP = "postgresql://memory_app:a@db.internal/memories"
OWNER = "postgresql://memory_owner:o@db.internal/memories"


def test_the_app_role_is_database_urls_user_when_the_owner_is_another():
    assert app_role(parse_database_url(APP), parse_database_url(OWNER)) == "memory_app"


def test_one_role_when_there_is_no_owner_url_or_it_names_the_same_user():
    assert app_role(parse_database_url(APP), None) is None
    assert app_role(parse_database_url(OWNER), parse_database_url(OWNER)) is None


def test_a_session_started_as_another_role_acts_as_that_role():
    acting = parse_database_url(f"{OWNER}?options=-c%20role%3Dmemory_app")
    assert app_role(acting, parse_database_url(OWNER)) == "memory_app"


@pytest.mark.parametrize(
    "app, owner, message",
    [
        (APP, "postgresql://memory_owner@db.internal/other", "names database 'other'"),
        ("postgresql://db.internal/memories", OWNER, "must name their user"),
        (APP, "postgresql://db.internal/memories", "must name their user"),
    ],
)
def test_owner_urls_that_cannot_grant_the_app_role_are_refused(app, owner, message):
    with pytest.raises(ImproperlyConfigured, match=message):
        app_role(parse_database_url(app), parse_database_url(owner))


def test_an_owner_url_alone_is_refused(monkeypatch, tmp_path):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setenv("DATABASE_OWNER_URL", OWNER)
    with pytest.raises(ImproperlyConfigured, match="DATABASE_URL is not"):
        database_urls(tmp_path)


def test_database_url_alone_migrates_with_the_same_role(monkeypatch, tmp_path):
    monkeypatch.setenv("DATABASE_URL", APP)
    monkeypatch.delenv("DATABASE_OWNER_URL", raising=False)
    assert database_urls(tmp_path) == (APP, None, None)


def test_both_urls_name_a_server_that_is_not_embedded(monkeypatch, tmp_path):
    monkeypatch.setenv("DATABASE_URL", APP)
    monkeypatch.setenv("DATABASE_OWNER_URL", OWNER)
    assert database_urls(tmp_path) == (APP, OWNER, None)


def test_without_database_url_the_embedded_servers_roles_are_named_and_nothing_is_made(
    monkeypatch, tmp_path
):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("DATABASE_OWNER_URL", raising=False)
    base = tmp_path / "a dir+with odd characters"
    urls = database_urls(base)
    pgdata = base / "var" / "pgdata"
    assert urls.pgdata == pgdata
    app, owner = parse_database_url(urls.app), parse_database_url(urls.owner)
    # The socket form the embedded server hands out, expecting its socket in its data dir.
    assert (app["USER"], app["NAME"], app["HOST"], app["PORT"]) == (
        database.APP_ROLE,
        database.EMBEDDED_DB_NAME,
        str(pgdata),
        "",
    )
    assert (owner["USER"], owner["HOST"]) == (database.OWNER_ROLE, str(pgdata))
    assert app_role(app, owner) == database.APP_ROLE
    assert not base.exists()


def test_the_embedded_servers_shared_buffers_are_an_eighth_of_memory_within_bounds():
    gib = 2**30
    assert database.server_settings(24 * gib) == {"shared_buffers": "2048MB"}
    assert database.server_settings(8 * gib) == {"shared_buffers": "1024MB"}
    assert database.server_settings(512 * 2**20) == {"shared_buffers": "128MB"}


def test_the_settings_file_is_written_and_included_once(tmp_path):
    (tmp_path / "postgresql.conf").write_text("max_connections = 100\n")
    database.write_server_settings(tmp_path)
    database.write_server_settings(tmp_path)
    conf = (tmp_path / "postgresql.conf").read_text()
    assert conf.count("include_if_exists = 'memory_console.conf'") == 1
    assert "shared_buffers = '" in (tmp_path / database.SERVER_SETTINGS_FILE).read_text()


def test_a_multi_host_database_url_lists_every_host_and_port_for_libpq():
    db = parse_database_url(
        "postgresql://app:pw@10.0.0.1:5433,10.0.0.2:5434,[::1]:5435/memories"
        "?target_session_attrs=read-write"
    )
    assert (db["HOST"], db["PORT"]) == ("10.0.0.1,10.0.0.2,::1", "5433,5434,5435")
    assert (db["USER"], db["PASSWORD"], db["NAME"]) == ("app", "pw", "memories")
    assert db["EXTRA_OPTIONS"] == {"target_session_attrs": "read-write"}


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://app@h1:5432,h2/db",  # one host without its port
        "postgresql://app@h1:5432,h2:99999/db",
        "postgresql://app@h1:x,h2:5432/db",
    ],
)
def test_a_multi_host_url_with_a_bad_or_missing_port_is_refused(url):
    with pytest.raises(ImproperlyConfigured):
        parse_database_url(url)
