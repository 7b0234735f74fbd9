"""Concurrent HTTP clients: a fixed number of requests per operation, after a warm-up.

Each client is a thread with its own http.client connection (reused when the server keeps
it open; gunicorn's sync workers close it after each response, and http.client reopens it).
A request that does not answer with the expected status fails the run: a benchmark of
errors would measure nothing.
"""

import http.client
import json
import threading
import time
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from urllib.parse import urlencode


class BadStatus(RuntimeError):
    pass


@dataclass
class Client:
    port: int
    headers: dict = field(default_factory=dict)

    def __post_init__(self):
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)

    def call(self, method: str, path: str, body=None, expect=(200,), headers=None):
        payload = None
        all_headers = {**self.headers, **(headers or {})}
        if isinstance(body, dict):
            payload = json.dumps(body).encode()
            all_headers["Content-Type"] = "application/json"
        elif isinstance(body, str):
            payload = body.encode()
        try:
            self.conn.request(method, path, body=payload, headers=all_headers)
            response = self.conn.getresponse()
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            self.conn.close()
            self.conn.request(method, path, body=payload, headers=all_headers)
            response = self.conn.getresponse()
        data = response.read()
        if response.status not in expect:
            raise BadStatus(f"{method} {path} -> {response.status}: {data[:300]!r}")
        if response.getheader("Connection", "").lower() == "close":
            self.conn.close()
        return response, data


def drive(port: int, headers: dict, make_request, clients: int, warmup: int, n: int):
    """Run `warmup` then `n` requests over `clients` threads; returns (latencies_s, wall_s).

    make_request(i) returns (method, path, body, expected statuses) for request i.
    """
    errors: list[BaseException] = []

    def run(count: int, offset: int, latencies: list | None):
        lock = threading.Lock()
        counter = iter(range(offset, offset + count))

        def worker():
            client = Client(port, headers)
            while not errors:
                with lock:
                    i = next(counter, None)
                if i is None:
                    return
                method, path, body, expect = make_request(i)
                started = time.perf_counter()
                try:
                    client.call(method, path, body, expect)
                except BaseException as error:  # noqa: BLE001 - reported after join
                    errors.append(error)
                    return
                if latencies is not None:
                    latencies.append(time.perf_counter() - started)

        threads = [threading.Thread(target=worker) for _ in range(clients)]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            raise errors[0]
        return time.perf_counter() - started

    run(warmup, 0, None)
    latencies: list[float] = []
    wall = run(n, warmup, latencies)
    return latencies, wall


def login(port: int, username: str, password: str) -> dict:
    """Log in through the console's login form; returns the session's Cookie header."""
    client = Client(port)
    response, data = client.call("GET", "/login/")
    jar = SimpleCookie()
    for value in response.headers.get_all("Set-Cookie") or []:
        jar.load(value)
    token = jar["csrftoken"].value
    html = data.decode()
    marker = 'name="csrfmiddlewaretoken" value="'
    form_token = html[html.index(marker) + len(marker) :].split('"', 1)[0]
    body = urlencode(
        {"csrfmiddlewaretoken": form_token, "username": username, "password": password}
    )
    response, _ = client.call(
        "POST",
        "/login/",
        body,
        expect=(302,),
        headers={
            "Cookie": f"csrftoken={token}",
            "Content-Type": "application/x-www-form-urlencoded",
        },
    )
    for value in response.headers.get_all("Set-Cookie") or []:
        jar.load(value)
    if "sessionid" not in jar:
        raise BadStatus("login did not set a session cookie")
    return {"Cookie": f"sessionid={jar['sessionid'].value}; csrftoken={jar['csrftoken'].value}"}
