"""A fault-injecting OpenAI/ollama-compatible server on loopback, for tests and tests/perf/runner_perf.py.

The fault is chosen by the URL path: base_url ``http://HOST:PORT/f/<fault>/<n>/v1`` makes the
first <n> requests with a given body fail with <fault> and later ones succeed (n = -1: always
fail). Faults: ok, 429, 429date, 500, 400, timeout, reset, truncated, empty, garbage, huge,
badutf8, nan, echoauth, noop (edit replies are no-ops until the corrective turn). Ollama: ``/api/chat``.

    python tests/runner/fakeserver.py --port 0 [--latency 0.2]   # prints "PORT <n>"
"""

from __future__ import annotations

import argparse
import email.utils
import hashlib
import json
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FaultServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024
    allow_reuse_address = True

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        latency: float = 0.0,
        hang_s: float = 3.0,
        retry_after: str = "0.05",
    ):
        super().__init__((host, port), FaultHandler)
        self.latency, self.hang_s, self.retry_after = latency, hang_s, retry_after
        self.lock = threading.Lock()
        self.counts: dict[str, int] = {}
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.auth_headers: list[str] = []
        self.headers_seen: list[dict[str, str]] = []  # every request's headers, names lower-cased
        self.bodies: list[dict] = []
        # set by a test: each handler, its reply delivered, stays until two more requests have
        # arrived (or `release()`), as a thread the OS does not run again at once would
        self.hold_after_reply = False
        # set by a test to the number of requests it will send: a request is answered only once
        # another is open too (or the last has arrived), so two are always in flight together
        self.pair_up = 0
        self.released = False
        self.arrivals = threading.Condition(self.lock)

    def url(self, fault: str = "ok", n: int = -1, prefix: str = "/v1") -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/f/{fault}/{n}{prefix}"

    def start(self) -> FaultServer:
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def release(self) -> None:
        with self.arrivals:
            self.released = True
            self.arrivals.notify_all()

    def stop(self) -> None:
        self.release()
        self.shutdown()
        self.server_close()


def answer_for(messages: list[dict]) -> str:
    """A deterministic plausible answer: valid edit JSON for edit prompts, else a letter."""
    text = json.dumps(messages)
    if "operations" in text:
        return json.dumps({"operations": [{"op": "translate", "dx": 10, "dy": -5}]})
    return "Answer: B"


class FaultHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are separate writes: avoid 40 ms delayed-ACK stalls
    server: FaultServer

    def log_message(self, fmt: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes, headers: dict | None = None, length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body) if length is None else length))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if self.server.hold_after_reply:
            self.send_header("Connection", "close")  # the next request then needs another thread
            self.close_connection = True
        self.end_headers()
        # The request stops counting as open before its last byte leaves: the client cannot have
        # the whole reply (and start another request in its place) before the count dropped.
        self.wfile.write(body[:-1])
        self.wfile.flush()
        self._closed_request()
        self.wfile.write(body[-1:])
        self.wfile.flush()
        srv = self.server
        if srv.hold_after_reply:
            mine = self._number
            with srv.arrivals:
                srv.arrivals.wait_for(lambda: srv.requests > mine + 1 or srv.released)

    def _closed_request(self) -> None:
        srv = self.server
        if getattr(self, "_open", False):
            self._open = False
            with srv.lock:
                srv.in_flight -= 1

    def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
        self._send(200, json.dumps({"object": "list", "data": [{"id": "fake"}]}).encode())

    def do_POST(self) -> None:  # noqa: N802 - the name http.server calls
        srv = self.server
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with srv.lock:
            srv.requests += 1
            self._number = srv.requests
            srv.arrivals.notify_all()
            srv.in_flight += 1
            srv.max_in_flight = max(srv.max_in_flight, srv.in_flight)
            if self.headers.get("Authorization"):
                srv.auth_headers.append(self.headers["Authorization"])
            srv.headers_seen.append({k.lower(): v for k, v in self.headers.items()})
        self._open = True  # open from receipt to the last byte written (see _send)
        if srv.pair_up:
            with srv.arrivals:
                srv.arrivals.wait_for(
                    lambda: srv.in_flight >= 2 or srv.requests >= srv.pair_up or srv.released
                )
        try:
            self._handle(raw)
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            self._closed_request()

    def _handle(self, raw: bytes) -> None:
        srv = self.server
        parts = self.path.strip("/").split("/")
        fault, n = "ok", -1
        if len(parts) >= 3 and parts[0] == "f":
            fault, n = parts[1], int(parts[2])
        ollama = self.path.endswith("/api/chat")
        try:
            req = json.loads(raw)
        except ValueError:
            self._send(400, b'{"error":{"message":"bad json"}}')
            return
        with srv.lock:
            srv.bodies.append(req)
        digest = hashlib.sha256(self.path.encode() + b"\0" + raw).hexdigest()
        with srv.lock:
            seen = srv.counts.get(digest, 0)
            srv.counts[digest] = seen + 1
        if srv.latency:
            time.sleep(srv.latency)
        failing = n < 0 or seen < n
        messages = req.get("messages", [])
        text = answer_for(messages)
        if fault == "noop" and "operations" in json.dumps(messages):
            corrective = sum(1 for m in messages if m.get("role") == "user") > 1
            if not corrective:
                text = json.dumps({"operations": [{"op": "translate", "dx": 0, "dy": 0}]})
            fault = "ok"
        if ollama:
            ok_payload = {
                "model": req.get("model"),
                "message": {"role": "assistant", "content": text},
                "done": True,
                "done_reason": "stop",
                "prompt_eval_count": 11,
                "eval_count": 3,
            }
        else:
            ok_payload = {
                "id": "x",
                "object": "chat.completion",
                "model": f"{req.get('model')}-served",
                "choices": [
                    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
                ],
                "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14},
            }
        ok_body = json.dumps(ok_payload).encode()
        if fault == "ok" or not failing:
            self._send(200, ok_body)
        elif fault == "429":
            self._send(429, b'{"error":{"message":"slow down"}}', {"Retry-After": srv.retry_after})
        elif fault == "429date":
            self._send(
                429,
                b'{"error":{"message":"slow down"}}',
                {"Retry-After": email.utils.formatdate(time.time() + 2, usegmt=True)},
            )
        elif fault == "500":
            self._send(500, b'{"error":{"message":"internal oops"}}')
        elif fault == "echoauth":  # a (bad) server that echoes the credentials it was sent
            auth = self.headers.get("Authorization", "")
            self._send(401, json.dumps({"error": {"message": f"invalid credentials {auth}"}}).encode())
        elif fault == "400":
            self._send(400, b'{"error":{"message":"model does not support images"}}')
        elif fault == "timeout":
            time.sleep(srv.hang_s)
            self._send(200, ok_body)
        elif fault == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
        elif fault == "truncated":
            self._send(200, ok_body[: len(ok_body) // 2], length=len(ok_body))
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
        elif fault == "empty":
            self._send(200, b"")
        elif fault == "garbage":
            self._send(200, b"<html>\x00\x01 not json at all")
        elif fault == "huge":
            size = 50 * 1024 * 1024
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(size))
            self.end_headers()
            chunk = b" " * (1024 * 1024)
            for _ in range(50):
                self.wfile.write(chunk)
            self.close_connection = True
        elif fault == "badutf8":
            self._send(200, ok_body.replace(b'"stop"', b'"st\xff\xfeop"'))
        elif fault == "nan":
            self._send(200, ok_body.replace(b'"prompt_tokens": 11', b'"prompt_tokens": NaN'))
        else:
            self._send(400, json.dumps({"error": {"message": f"unknown fault {fault}"}}).encode())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--latency", type=float, default=0.0)
    a = p.parse_args(argv)
    srv = FaultServer(a.host, a.port, a.latency)
    print(f"PORT {srv.server_address[1]}", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
