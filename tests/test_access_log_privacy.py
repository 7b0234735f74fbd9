"""gunicorn's access and error logs (memory_console/gunicorn_log.py): one valid JSON object
per line whatever the request holds, and never the value of a query parameter, which can
be memory or conversation text that a forget must leave nowhere.

The first half drives the logger class with crafted WSGI environs; the second sends raw
requests (bytes a well-behaved client would never send) to `manage.py serve` on the test
database, forgets a memory, and reads everything the server wrote.
"""

import json
import socket
from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.conf import settings
from gunicorn.config import Config

from memory_console.bench.database import server_url
from memory_console.gunicorn_log import JsonLogger, parameter_names, without_client_input
from memory_console.loadgen.client import HOST, request
from memory_console.loadgen.server import AppServer, wait_until
from memory_core.db.privileges import OWNER_ALIAS
from memory_core.models import Memory

CANARY = "FORGETCANARY888"
# What a client's bytes may hold, each as WSGI hands it over (bytes decoded as Latin-1).
NASTY = {
    "backslash": b"INJ6\\",
    "quotes": b"say \"hi\" 'there'",
    "json breakout": b'"}, {"status": 200, "x": "\\',
    "control characters": b"a\x00b\x01c\x1bd\x7fe\tf",
    "line breaks": b"one\ntwo\rthree",
    "invalid UTF-8": b"\xff\xfe\xc3(\xa0\xa1",
    "valid UTF-8": "passé ✓".encode(),
}


def wsgi(raw: bytes) -> str:
    return raw.decode("latin-1")


@pytest.fixture
def gunicorn_logs(tmp_path):
    """The JsonLogger as `serve` configures it, writing its two logs to files."""
    access, error = tmp_path / "access.log", tmp_path / "error.log"
    cfg = Config()
    cfg.set("accesslog", str(access))
    cfg.set("errorlog", str(error))
    logger = JsonLogger(cfg)
    yield SimpleNamespace(logger=logger, access=access, error=error)
    detach(logger)


def detach(logger: JsonLogger) -> None:
    """Take the logger's file handlers off logging's process-wide gunicorn loggers."""
    for log in (logger.access_log, logger.error_log):
        for handler in [h for h in log.handlers if getattr(h, "_gunicorn", False)]:
            log.removeHandler(handler)
            handler.close()


def environ(target: bytes, **headers: bytes) -> dict:
    path, _, query = target.partition(b"?")
    return {
        "REQUEST_METHOD": "GET",
        "RAW_URI": wsgi(target),
        "PATH_INFO": wsgi(path),
        "QUERY_STRING": wsgi(query),
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        **{f"HTTP_{name.upper()}": wsgi(value) for name, value in headers.items()},
    }


def answered(status: str = "200 OK", request_id: str = "req-1"):
    return SimpleNamespace(status=status, sent=17, headers=[("X-Request-ID", request_id)])


def json_lines(path) -> list[dict]:
    text = path.read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


# --- the logger, unit by unit -----------------------------------------------------------------


def test_an_access_line_names_the_parameters_and_holds_none_of_their_values(gunicorn_logs):
    target = f"/api/v1/memories/search?actor=u1&q=passport+renewed+{CANARY}&limit=5".encode()
    gunicorn_logs.logger.access(
        answered(),
        None,
        environ(target, user_agent=b"agent/1.0", referer=f"http://x/?q={CANARY}".encode()),
        timedelta(seconds=1, microseconds=2500),
    )

    [line] = json_lines(gunicorn_logs.access)
    assert CANARY not in gunicorn_logs.access.read_text()
    assert line.pop("time")
    assert line == {
        "level": "INFO",
        "logger": "gunicorn.access",
        "remote": "127.0.0.1",
        "method": "GET",
        "path": "/api/v1/memories/search",
        "query": ["actor", "limit", "q"],
        "protocol": "HTTP/1.1",
        "status": 200,
        "bytes": 17,
        "micros": 1_002_500,
        "request_id": "req-1",
        "user_agent": "agent/1.0",
    }


def test_the_console_attribution_line_is_not_logged(gunicorn_logs):
    target = f"/attribution/?line=Mia%27s+passport+renewed+{CANARY}&run=r1".encode()
    gunicorn_logs.logger.access(answered("302 Found"), None, environ(target), timedelta())

    [line] = json_lines(gunicorn_logs.access)
    assert (line["path"], line["query"], line["status"]) == ("/attribution/", ["line", "run"], 302)
    assert CANARY not in gunicorn_logs.access.read_text()


def test_parameter_names_that_might_be_text_are_not_logged():
    query = f"q=a&actor=u1&q=b&&{CANARY}&passport%20renewed=1&=v&a[b]=1&x.y-z_0=2"
    assert parameter_names(query) == ["?", "a[b]", "actor", "q", "x.y-z_0"]
    assert parameter_names("") == []


@pytest.mark.parametrize("kind", sorted(NASTY))
def test_any_path_and_header_make_one_valid_json_line(gunicorn_logs, kind):
    raw = NASTY[kind]
    target = b"/actors/acme/" + raw + b"?q=" + raw + CANARY.encode() + b"&" + raw + b"=1"
    gunicorn_logs.logger.access(
        answered("404 Not Found", request_id=wsgi(raw)),
        None,
        environ(target, user_agent=raw, x_request_id=raw),
        timedelta(microseconds=10),
    )

    [line] = json_lines(gunicorn_logs.access)
    # Plain ASCII on disk: every other character is a JSON escape.
    assert gunicorn_logs.access.read_bytes().isascii()
    assert line["path"] == "/actors/acme/" + raw.decode("utf-8", "backslashreplace")
    assert line["user_agent"] == raw.decode("utf-8", "backslashreplace")
    assert line["query"] == ["?", "q"]
    assert CANARY not in gunicorn_logs.access.read_text()


def test_an_environ_without_gunicorns_raw_uri_is_logged_too(gunicorn_logs):
    plain = environ(b"/x")
    del plain["RAW_URI"]
    plain["QUERY_STRING"] = f"q={CANARY}"
    gunicorn_logs.logger.access(answered(), None, plain, timedelta())

    [line] = json_lines(gunicorn_logs.access)
    assert (line["path"], line["query"]) == ("/x", ["q"])
    assert CANARY not in gunicorn_logs.access.read_text()


def test_gunicorns_invalid_request_warning_keeps_the_error_and_drops_the_request_line():
    quoted = f"'GET /api/v1/memories/search?q=passport {CANARY} HTTP/1.1'"
    message = f"Invalid request from ip=::1: Invalid HTTP request line: {quoted}"
    assert without_client_input(message) == (
        "Invalid request from ip=::1: Invalid HTTP request line"
    )
    assert without_client_input(f"Error handling request GET /s?q={CANARY}") == (
        "Error handling request GET /s?…"
    )
    for own in ("Booting worker with pid: 12", "Worker was sent SIGKILL! Out of memory?"):
        assert without_client_input(own) == own


def test_the_error_log_is_json_and_quotes_no_request(gunicorn_logs):
    log = gunicorn_logs.logger
    log.info("Booting worker with pid: %s", 12)
    log.warning(
        f"Invalid request from ip=127.0.0.1: Invalid HTTP request line: "
        f"'GET /x?q=passport \\\"{CANARY} HTTP/1.1'"
    )
    try:
        raise ValueError("boom")
    except ValueError:
        log.exception("Error handling request %s %s", "GET", f"/x?q=\x00{CANARY}\\")

    lines = json_lines(gunicorn_logs.error)
    assert [(line["level"], line["logger"], line["message"]) for line in lines] == [
        ("INFO", "gunicorn.error", "Booting worker with pid: 12"),
        (
            "WARNING",
            "gunicorn.error",
            "Invalid request from ip=127.0.0.1: Invalid HTTP request line",
        ),
        ("ERROR", "gunicorn.error", "Error handling request GET /x?…"),
    ]
    assert "ValueError: boom" in lines[2]["exception"]
    assert CANARY not in gunicorn_logs.error.read_text()


def test_with_text_logs_the_error_log_is_text_and_still_quotes_no_request(settings, tmp_path):
    settings.LOG_FORMAT = "text"
    cfg = Config()
    cfg.set("errorlog", str(tmp_path / "error.log"))
    logger = JsonLogger(cfg)
    try:
        logger.warning(f"Invalid request from ip=::1: Invalid HTTP method: 'x?q={CANARY}'")
    finally:
        detach(logger)
    text = (tmp_path / "error.log").read_text()
    assert text.rstrip().endswith("[WARNING] Invalid request from ip=::1: Invalid HTTP method")


def test_serve_configures_gunicorn_with_the_json_logger():
    from memory_console.management.commands.serve import ConsoleApplication, gunicorn_options

    app = ConsoleApplication(gunicorn_options("127.0.0.1", 8011, 1))
    assert app.cfg.logger_class is JsonLogger
    assert (app.cfg.accesslog, app.cfg.errorlog) == ("-", "-")


# --- the real server ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(django_db_setup, django_db_blocker, tmp_path_factory):
    name = settings.DATABASES["default"]["NAME"]
    with django_db_blocker.unblock():
        url, owner_url = server_url(name), server_url(name, OWNER_ALIAS)
    log = tmp_path_factory.mktemp("logged-server") / "server.log"
    # LOG_LEVEL=INFO: Django's own lines (django.request's 4xx warnings among them) too.
    with AppServer(url, owner_url, log_path=log, workers=1, env={"LOG_LEVEL": "INFO"}) as app:
        yield app


def raw_request(port: int, head: bytes) -> bytes:
    """Send `head` as is (whatever bytes it holds) and read the answer to the end."""
    with socket.create_connection((HOST, port), timeout=30) as sock:
        sock.sendall(head)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def head(target: bytes, *headers: bytes) -> bytes:
    lines = [b"GET " + target + b" HTTP/1.1", b"Host: 127.0.0.1", b"Connection: close", *headers]
    return b"\r\n".join(lines) + b"\r\n\r\n"


# Each sent as bytes; some gunicorn refuses (400) before Django sees them: those are logged by
# its error path, which must be as careful.
RAW_REQUESTS = [
    head(b"/api/v1/health?x=INJ6\\"),
    head(b'/api/v1/he\\al"th?q=' + CANARY.encode() + b"\\\"'"),
    head(b"/actors/%FF%FE%00%0A%22%5C/?q=%FF" + CANARY.encode()),
    head(b"/actors/\xff\xfe\xc3(/?q=" + CANARY.encode()),
    head(b"/api/v1/memories/search?actor=u1&q=passport " + CANARY.encode()),
    head(b"/api/v1/health", b'User-Agent: ua "quoted" \\ back \xff\xfe\xc3( end'),
    head(b"/api/v1/health", b"User-Agent: a\x01b\x7fc\x1bd"),
    head(b"/api/v1/health", b'X-Request-ID: "},{"injected":"\\'),
    head(b"/api/v1/health", b"Referer: http://evil/?q=passport+" + CANARY.encode()),
    head(b"/api/v1/health", b"Bad\\Header: 1"),
]


@pytest.mark.slow  # a real gunicorn, its log read back
def test_after_a_forget_the_servers_log_holds_nothing_of_the_fact(server, org, transactional_db):
    auth = {"Authorization": f"Bearer {org.acme_secret}"}
    fact = f"passport renewed {CANARY}"
    remembered = request(
        server.port,
        "POST",
        "/api/v1/memories",
        body={"actor": "u1", "key": "passport", "fact": fact},
        headers=auth,
    )
    assert remembered.status == 201, remembered.body
    memory_id = remembered.json()["id"]
    found = request(
        server.port, "GET", f"/api/v1/memories/search?actor=u1&q=passport+{CANARY}", headers=auth
    )
    assert found.status == 200 and CANARY in found.body.decode()
    # The console's attribution page (no session: sent to the login page, logged all the same).
    attribution = request(server.port, "GET", f"/attribution/?line=Mia%27s+passport+{CANARY}")
    assert attribution.status == 302
    forgot = request(server.port, "DELETE", f"/api/v1/memories/{memory_id}?actor=u1", headers=auth)
    assert forgot.status == 204
    assert not Memory.objects.filter(text__contains=CANARY).exists()
    answers = [raw_request(server.port, raw) for raw in RAW_REQUESTS]
    assert all(answer.startswith(b"HTTP/1.1 ") for answer in answers)

    # Every request leaves an access line, or (one gunicorn refused before it had a request
    # to log) an "Invalid request" warning; gunicorn writes the access line once the answer
    # is sent, so the last ones may lag behind the answer. One more: serve's wait for /health.
    sent = 1 + 4 + len(RAW_REQUESTS)
    wait_until(
        lambda: sum(map(len, requests_logged(server.log_path))) >= sent,
        timeout=30,
        what="a log line for every request",
    )
    accesses, refused = requests_logged(server.log_path)
    assert len(accesses) + len(refused) == sent
    assert refused  # some of the raw requests never reach Django, nor have a line of their own
    text = server.log_path.read_bytes()
    # Not the fact, nor its key, nor the words of the search or the attribution line.
    assert CANARY.encode() not in text and b"passport" not in text
    # Everything after serve's own start-up lines is gunicorn's and Django's log: all JSON.
    banner, marker, logged = text.partition(b"Press Ctrl-C to stop.\n")
    assert marker and b"{" not in banner
    for line in logged.splitlines():
        assert isinstance(json.loads(line), dict), line
    searched = [a for a in accesses if a["path"] == "/api/v1/memories/search"]
    assert {tuple(a["query"]) for a in searched} >= {("actor", "q")}
    assert any(a["path"] == "/attribution/" and a["query"] == ["line"] for a in accesses)
    assert any(a["method"] == "DELETE" and a["status"] == 204 for a in accesses)
    assert any(a["path"] == "/api/v1/health" and a["query"] == ["x"] for a in accesses)
    assert any(a["path"] == '/api/v1/he\\al"th' and a["status"] == 404 for a in accesses)
    assert 'ua "quoted" \\ back \\xff\\xfe\\xc3( end' in [a["user_agent"] for a in accesses]


def requests_logged(path) -> tuple[list[dict], list[dict]]:
    """The server's access lines, and its warnings of requests refused unparsed."""
    lines = [json.loads(line) for line in path.read_bytes().splitlines() if line.startswith(b"{")]
    accesses = [line for line in lines if line["logger"] == "gunicorn.access"]
    refused = [
        line
        for line in lines
        if line["logger"] == "gunicorn.error" and line["message"].startswith("Invalid request")
    ]
    return accesses, refused
