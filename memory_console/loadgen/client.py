"""One HTTP request to the app under test, over loopback, and a logged-in console session.

`request` opens a fresh connection, as a client behind a load balancer would: a fresh one
tells the caller which client port it used (the reliability suite finds the worker serving
a request by it). `KeptAlive` keeps one open across requests, as an agent's HTTP client
does. A request never raises for a transport failure: the answer then has status None and
the error, so a load test can count it and a benchmark can refuse it.
"""

import http.client
import json
import socket
import time
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from urllib.parse import urlencode

HOST = "127.0.0.1"


class LoginFailed(AssertionError):
    """The console did not log the session in (an AssertionError: to a test, a failed check)."""


@dataclass
class Response:
    method: str
    path: str
    status: int | None  # None: no HTTP answer at all (reset, refused, timeout)
    body: bytes = b""
    headers: dict = field(default_factory=dict)  # lower-cased names, the last value of each
    elapsed: float = 0.0  # seconds, from before connecting to the last byte of the body
    error: str = ""
    client_port: int | None = None
    set_cookies: list[str] = field(default_factory=list)  # every Set-Cookie header

    def json(self):
        return json.loads(self.body)

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")


def _encoded(body, headers: dict):
    """The bytes of `body`: a dict or list as JSON (setting its Content-Type), a str as is."""
    if body is None:
        return None
    if isinstance(body, (dict, list)):
        headers.setdefault("Content-Type", "application/json")
        return json.dumps(body).encode()
    if isinstance(body, str):
        return body.encode()
    return body


def _exchange(conn, method, path, data, headers, started, on_sent=None) -> Response:
    """Send one request on `conn` (connecting it first if it is not) and read the answer."""
    if conn.sock is None:
        conn.connect()
    client_port = conn.sock.getsockname()[1]
    conn.request(method, path, body=data, headers=headers)
    if on_sent is not None:
        on_sent(client_port)
    resp = conn.getresponse()
    payload = resp.read()
    return Response(
        method,
        path,
        resp.status,
        payload,
        {k.lower(): v for k, v in resp.getheaders()},
        time.perf_counter() - started,
        client_port=client_port,
        set_cookies=resp.headers.get_all("Set-Cookie") or [],
    )


def _failed(method, path, started, error) -> Response:
    return Response(
        method,
        path,
        None,
        elapsed=time.perf_counter() - started,
        error=f"{type(error).__name__}: {error}",
    )


def request(
    port: int,
    method: str,
    path: str,
    *,
    body=None,
    headers: dict | None = None,
    timeout: float = 60,
    on_sent=None,
) -> Response:
    """One request on a fresh loopback connection. A dict or list body is sent as JSON, a
    str as is (say, a urlencoded form, with its Content-Type in `headers`). `on_sent(port)`
    is called with the client port once the request is sent, before the answer is read."""
    headers = dict(headers or {})
    data = _encoded(body, headers)
    started = time.perf_counter()
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    client_port = None
    try:
        conn.connect()
        # Kept for a failed answer too: the reliability suite finds the worker by it.
        client_port = conn.sock.getsockname()[1]
        return _exchange(conn, method, path, data, headers, started, on_sent)
    except (OSError, http.client.HTTPException) as error:
        failed = _failed(method, path, started, error)
        failed.client_port = client_port
        return failed
    finally:
        conn.close()


class _Dropped(ConnectionError):
    """The connection ended before the first byte of an answer."""


class KeptAlive:
    """One client's HTTP/1.1 connection, kept open across its requests, as an agent's HTTP
    client keeps one (the server's gthread workers keep it too). A connection the server
    closed while it sat idle is opened again and the request sent once more; any other
    failure is an answer with status None, as for `request`.

    It speaks HTTP/1.1 over a plain socket rather than through http.client: the bench's
    saturated turns run it on the cores the server under test uses, and http.client's
    header parsing (the email package) cost more of them than the rest of the client."""

    def __init__(self, port: int, timeout: float = 60):
        self.port = port
        self.timeout = timeout
        self.sock: socket.socket | None = None
        self.pending = b""  # bytes read past the end of the last answer

    def request(self, method: str, path: str, *, body=None, headers=None) -> Response:
        headers = dict(headers or {})
        data = _encoded(body, headers)
        started = time.perf_counter()
        reused = self.sock is not None
        try:
            try:
                return self._exchange(method, path, data, headers, started)
            except (_Dropped, BrokenPipeError, ConnectionResetError):
                if not reused:
                    raise
                self.close()  # closed by the server between two requests: reopen
                return self._exchange(method, path, data, headers, started)
        except (OSError, ValueError, IndexError) as error:  # IndexError: no status line
            self.close()
            return _failed(method, path, started, error)

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
        self.sock = None
        self.pending = b""

    def _exchange(self, method, path, data, headers, started) -> Response:
        if self.sock is None:
            self.sock = socket.create_connection((HOST, self.port), timeout=self.timeout)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        lines = [f"{method} {path} HTTP/1.1", f"Host: {HOST}:{self.port}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        if data is not None:
            lines.append(f"Content-Length: {len(data)}")
        self.sock.sendall("\r\n".join(lines).encode("latin-1") + b"\r\n\r\n" + (data or b""))
        client_port = self.sock.getsockname()[1]
        head = self._read_until(b"\r\n\r\n", first=True)
        status_line, *fields = head.decode("latin-1").split("\r\n")
        status = int(status_line.split(" ", 2)[1])
        found: dict[str, str] = {}
        cookies = []
        for line in fields:
            name, _, value = line.partition(":")
            name, value = name.strip().lower(), value.strip()
            found[name] = value
            if name == "set-cookie":
                cookies.append(value)
        if method == "HEAD" or status in (204, 304) or status < 200:
            payload = b""  # no body, whatever the headers say
        elif "chunked" in found.get("transfer-encoding", "").lower():
            payload = self._read_chunked()
        elif "content-length" in found:
            payload = self._read_exactly(int(found["content-length"]))
        else:  # delimited by the end of the connection
            payload = self.pending + self._read_to_end()
            self.pending = b""
            found["connection"] = "close"
        if found.get("connection", "").lower() == "close":
            self.close()
        return Response(
            method,
            path,
            status,
            payload,
            found,
            time.perf_counter() - started,
            client_port=client_port,
            set_cookies=cookies,
        )

    def _receive(self, *, first: bool = False) -> bytes:
        chunk = self.sock.recv(65536)
        if not chunk:
            if first and not self.pending:  # before any byte of the answer
                raise _Dropped("the server closed the connection")
            raise ConnectionAbortedError("the server closed the connection mid-answer")
        return chunk

    def _read_until(self, marker: bytes, *, first: bool = False) -> bytes:
        while marker not in self.pending:
            self.pending += self._receive(first=first)
        head, _, self.pending = self.pending.partition(marker)
        return head

    def _read_exactly(self, size: int) -> bytes:
        while len(self.pending) < size:
            self.pending += self._receive()
        payload, self.pending = self.pending[:size], self.pending[size:]
        return payload

    def _read_chunked(self) -> bytes:
        parts = []
        while True:
            size = int(self._read_until(b"\r\n").split(b";", 1)[0], 16)
            if size == 0:
                self._read_until(b"\r\n")  # the end (no trailers are sent to us)
                return b"".join(parts)
            parts.append(self._read_exactly(size + 2)[:-2])

    def _read_to_end(self) -> bytes:
        parts = []
        while chunk := self.sock.recv(65536):
            parts.append(chunk)
        return b"".join(parts)


def get(port: int, path: str, **kwargs) -> Response:
    return request(port, "GET", path, **kwargs)


class ConsoleSession:
    """A logged-in browser, reduced to its cookies and the CSRF header."""

    def __init__(self, port: int, timeout: float = 60):
        self.port = port
        self.cookies: dict[str, str] = {}
        self.timeout = timeout

    def _absorb(self, resp: Response) -> Response:
        for raw in resp.set_cookies:
            jar = SimpleCookie()
            jar.load(raw)
            for name, morsel in jar.items():
                self.cookies[name] = morsel.value
        return resp

    def headers(self, extra=None) -> dict:
        """The headers a request of this session carries (its Cookie header)."""
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        headers.update(extra or {})
        return headers

    def get(self, path: str) -> Response:
        return self._absorb(
            request(self.port, "GET", path, headers=self.headers(), timeout=self.timeout)
        )

    def post(self, path: str, form: dict) -> Response:
        headers = self.headers(
            {
                "Content-Type": "application/x-www-form-urlencoded",
                "X-CSRFToken": self.cookies.get("csrftoken", ""),
            }
        )
        return self._absorb(
            request(
                self.port, "POST", path, body=urlencode(form), headers=headers, timeout=self.timeout
            )
        )

    def login(self, username: str, password: str) -> None:
        """Through the console's login form, as a browser does; LoginFailed if it fails."""
        self.get("/login/")
        if "csrftoken" not in self.cookies:
            raise LoginFailed("the login page set no CSRF cookie")
        resp = self.post("/login/", {"username": username, "password": password, "next": "/"})
        if resp.status != 302:
            raise LoginFailed(f"login of {username} answered {resp.status}: {resp.body[:300]!r}")
        if "sessionid" not in self.cookies:
            raise LoginFailed(f"login of {username} set no session cookie")
