"""A scripted loopback HTTP server for the plugin's failure-path tests: each request gets the
next scripted reply; "hold" keeps the connection open without answering until released."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOLD_BOUND_S = 30.0  # a held request is answered at the latest then (the server never outlives a test)


@dataclass
class Reply:
    status: int = 200
    body: dict | None = None
    headers: tuple[tuple[str, str], ...] = ()
    hold: bool = False  # wait for release() (or HOLD_BOUND_S) before answering
    html: str | None = None  # an HTML page instead of the JSON body (a proxy's error page)


def chat_reply(text: str = "Answer: F1") -> Reply:
    return Reply(200, {"choices": [{"message": {"role": "assistant", "content": text}}]})


def error_reply(status: int, message: str, *headers: tuple[str, str]) -> Reply:
    return Reply(status, {"error": {"message": message, "type": "test"}}, tuple(headers))


class SlowServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, script: list[Reply]):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script = list(script)
        self.requests: list[str] = []
        self.arrived = threading.Condition()
        self.released = threading.Event()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def next_reply(self, path: str) -> Reply:
        with self.arrived:
            self.requests.append(path)
            reply = self.script.pop(0) if len(self.script) > 1 else self.script[0]
            self.arrived.notify_all()
        return reply

    def wait_requests(self, n: int, timeout: float) -> bool:
        """True once `n` requests arrived (False after `timeout` s)."""
        with self.arrived:
            return self.arrived.wait_for(lambda: len(self.requests) >= n, timeout)


class _Handler(BaseHTTPRequestHandler):
    server: SlowServer

    def do_POST(self) -> None:  # noqa: N802 - http.server API
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self._answer(self.server.next_reply(self.path))

    def do_GET(self) -> None:  # noqa: N802 - http.server API
        self._answer(self.server.next_reply(self.path))

    def _answer(self, reply: Reply) -> None:
        if reply.hold:
            self.server.released.wait(HOLD_BOUND_S)
        data = reply.html.encode() if reply.html is not None else json.dumps(reply.body or {}).encode()
        try:
            self.send_response(reply.status)
            self.send_header("content-type", "text/html" if reply.html is not None else "application/json")
            self.send_header("content-length", str(len(data)))
            for name, value in reply.headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client gave up (timeout, cancel): nothing to answer
            pass

    def log_message(self, *args) -> None:
        pass


@contextmanager
def slow_server(*script: Reply) -> Iterator[SlowServer]:
    server = SlowServer(list(script))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.released.set()
        server.shutdown()
        server.server_close()
        thread.join(5)
