"""The load generator's HTTP client (memory_console/loadgen/client.py): a fresh connection
per request, or one kept alive across a client's requests (the bench's throughput)."""

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from memory_console.loadgen import client
from memory_console.loadgen.client import KeptAlive, request


class _Echo(BaseHTTPRequestHandler):
    """Answers each POST with the client's port. `close=1` in the path closes the connection
    after the answer, saying so; `drop=1` closes it without a word, as an idle timeout does;
    `cut=1` closes it without answering; `half=1` after half an answer; `chunked=1` sends
    the answer in chunks, with a cookie; `empty=1` answers 204."""

    protocol_version = "HTTP/1.1"
    received: list[str] = []

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.received.append(self.path)
        if "cut=1" in self.path:  # no answer at all: the connection just ends
            self.close_connection = True
            return
        body = str(self.client_address[1]).encode()
        if "half=1" in self.path:
            self.send_response(200)
            self.send_header("Content-Length", "100")
            self.end_headers()
            self.wfile.write(body)
            self.close_connection = True
            return
        if "empty=1" in self.path:  # 204: no body and no length
            self.send_response(204)
            self.end_headers()
            return
        if "chunked=1" in self.path:
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Set-Cookie", "a=1")
            self.send_header("Set-Cookie", "b=2")
            self.end_headers()
            for part in (body[:2], body[2:]):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\n\r\n")
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        if "close=1" in self.path:
            self.send_header("Connection", "close")
            self.close_connection = True
        if "drop=1" in self.path:
            self.close_connection = True
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def port():
    server = ThreadingHTTPServer((client.HOST, 0), _Echo)
    # shutdown() waits for the loop's next poll: half a second a test at the default.
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def test_a_kept_alive_client_sends_every_request_on_one_connection(port):
    kept = KeptAlive(port)
    answers = [kept.request("POST", "/", body={"n": n}) for n in range(5)]
    kept.close()
    assert [a.status for a in answers] == [200] * 5
    assert len({a.body for a in answers}) == 1  # one client port: one connection


def test_fresh_requests_each_open_their_own_connection(port):
    answers = [request(port, "POST", "/", body={"n": n}) for n in range(3)]
    assert [a.status for a in answers] == [200] * 3
    assert len({a.body for a in answers}) == 3
    assert all(int(a.body) == a.client_port for a in answers)


@pytest.mark.parametrize(
    "closing",
    [
        pytest.param("close", id="saying-so"),
        # Unannounced, as an idle timeout does: the next send finds it gone and resends.
        pytest.param("drop", id="without-a-word"),
    ],
)
def test_a_connection_the_server_closed_is_opened_again(port, closing):
    kept = KeptAlive(port)
    first = kept.request("POST", f"/?{closing}=1", body={})
    second = kept.request("POST", "/", body={})
    kept.close()
    assert first.status == second.status == 200
    assert first.body != second.body  # the second went out on a new connection


def test_a_kept_alive_client_reads_a_chunked_answer_and_keeps_the_connection(port):
    kept = KeptAlive(port)
    first = kept.request("POST", "/?chunked=1", body={})
    second = kept.request("POST", "/", body={})
    kept.close()
    assert first.status == 200 and first.body == second.body  # whole, and one connection
    assert first.set_cookies == ["a=1", "b=2"]
    assert first.headers["transfer-encoding"] == "chunked"


def test_a_kept_alive_client_reads_no_body_after_a_204(port):
    kept = KeptAlive(port, timeout=5)
    empty = kept.request("POST", "/?empty=1", body={})
    after = kept.request("POST", "/", body={})
    kept.close()
    assert (empty.status, empty.body) == (204, b"")
    assert after.status == 200 and empty.elapsed < 5  # read at once, not at the timeout


def test_an_answer_cut_off_midway_is_a_failure_and_is_not_sent_again(port):
    _Echo.received.clear()
    kept = KeptAlive(port)
    kept.request("POST", "/", body={})  # the connection is now one that was reused

    answer = kept.request("POST", "/?half=1", body={})

    assert answer.status is None and "mid-answer" in answer.error
    assert _Echo.received == ["/", "/?half=1"]  # once: a POST is not repeated blindly
    assert kept.request("POST", "/", body={}).status == 200  # a new connection after it


def test_an_answer_that_is_not_http_is_a_failure_not_an_exception():
    with socket.socket() as server:
        server.bind((client.HOST, 0))
        server.listen()

        def answer_garbage():
            conn, _ = server.accept()
            with conn:
                conn.recv(65536)
                conn.sendall(b"garbage\r\n\r\n")

        thread = threading.Thread(target=answer_garbage, daemon=True)
        thread.start()
        answer = KeptAlive(server.getsockname()[1], timeout=5).request("POST", "/", body={})
        thread.join(timeout=5)

    assert answer.status is None and answer.error


def test_a_fresh_request_cut_off_keeps_its_client_port(port):
    answer = request(port, "POST", "/?cut=1", body={})
    assert answer.status is None and answer.client_port is not None


def test_a_refused_connection_is_an_answer_without_status():
    with ThreadingHTTPServer((client.HOST, 0), _Echo) as server:
        closed_port = server.server_address[1]
    answer = KeptAlive(closed_port).request("POST", "/", body={})
    assert answer.status is None and "ConnectionRefused" in answer.error
