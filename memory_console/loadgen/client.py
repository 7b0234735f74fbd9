"""One HTTP request to the app under test, over loopback, and a logged-in console session.

`request` opens a fresh connection, as a client behind a load balancer would: a fresh one
tells the caller which client port it used (the reliability suite finds the worker serving
a request by it). `KeptAlive` keeps one open across requests, as an agent's HTTP client
does. A request never raises for a transport failure: the answer then has status None and
the error, so a load test can count it and a benchmark can refuse it.
"""

import http.client
import json
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


class KeptAlive:
    """One client's HTTP/1.1 connection, kept open across its requests, as an agent's HTTP
    client keeps one (the server's gthread workers keep it too). A connection the server
    closed while it sat idle is opened again and the request sent once more; any other
    failure is an answer with status None, as for `request`."""

    def __init__(self, port: int, timeout: float = 60):
        self.conn = http.client.HTTPConnection(HOST, port, timeout=timeout)

    def request(self, method: str, path: str, *, body=None, headers=None) -> Response:
        headers = dict(headers or {})
        data = _encoded(body, headers)
        started = time.perf_counter()
        reused = self.conn.sock is not None
        try:
            try:
                return _exchange(self.conn, method, path, data, headers, started)
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                if not reused:
                    raise
                self.conn.close()  # closed by the server between two requests: reopen
                return _exchange(self.conn, method, path, data, headers, started)
        except (OSError, http.client.HTTPException) as error:
            self.conn.close()
            return _failed(method, path, started, error)

    def close(self) -> None:
        self.conn.close()


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
