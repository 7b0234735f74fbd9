"""A scripted JSON endpoint over real HTTP: what the stand-ins for the model servers the
product talks to share (loadgen/chat_model.py for the capture extractor's chat model,
tests/embedding_server.py for the `http` embedder).

A ThreadingHTTPServer in a thread of its own, on a free loopback port (`url` ends in
`/v1`). Every POST is recorded (path, headers, body; the body None when it is not JSON) and
answered by the subclass's `respond(path, body)`, which returns (status, payload): a dict
is sent as JSON, bytes as they are. Use it as a context manager: entering starts the
thread, leaving stops the server.
"""

import json
import threading
from abc import ABC, abstractmethod
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOST = "127.0.0.1"


class ScriptedServer(ABC):
    # HTTP/1.0 closes each connection after its answer; a subclass may keep them alive.
    protocol_version = "HTTP/1.0"

    def __init__(self):
        self.requests: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = outer.protocol_version

            def log_message(self, *args):
                pass

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                outer.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "body": body}
                )
                status, payload = outer.respond(self.path, body)
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer((HOST, 0), Handler)
        self.url = f"http://{HOST}:{self.httpd.server_address[1]}/v1"
        # shutdown() waits for the loop's next poll: half a second a use at the default.
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @abstractmethod
    def respond(self, path: str, body) -> tuple[int, dict | bytes]:
        """The answer to a POST of `body` (None when it was not JSON) to `path`."""

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
