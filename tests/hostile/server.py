"""A hostile OpenAI/ollama-compatible endpoint on 127.0.0.1, speaking raw HTTP/1.1 on a socket so
that it can misbehave where a framework would not let it: in the status line and headers too.

The reply shape is chosen by the path: base URL ``http://127.0.0.1:PORT/h/<shape>/v1`` (ollama:
the same base, ``/api/chat`` is appended). Shapes:

    ok                 a well-formed reply
    drip-body          headers, then the body one byte every `drip_s` seconds
    drip-headers       the status line, then header bytes one every `drip_s` seconds
    surrogate-content  a reply whose content holds an unpaired surrogate ("\\ud800", valid JSON)
    surrogate-reasoning  the same in the reasoning
    surrogate-error    a 400 whose error message holds one
    surrogate-header   a reply with a header of bytes no UTF-8 decoder accepts (surrogate-escaped)
    gzip-bomb          Content-Encoding: gzip, `bomb_mb` MiB of zeros in ~1/1000 of that
    deep               a 200 body nested 100,000 levels deep
    retry-after        429 with Retry-After: 1000000000
    echo-key           a reply whose content echoes the request's Authorization header
    echo-url           a 404 whose message echoes the request line (path and query)
    hold               a reply only once `release` is set (`received` is set per request)
    big-int            a 200 reply holding a 5,000-digit number (valid JSON past Python's int limit)
    big-int-400, big-int-401  a 400 / 401 whose error holds that number
    echo-key-cut-401   a 401 echoing the key so that its 500-character cut falls 2 characters
                       before the key's end
    echo-key-cut-html  an HTML 200 page echoing the key across the 200-character excerpt's cut
    echo-key-cut-refusal  a refusal echoing the key across the 300-character cut it once had
    rate-limit         429 with Retry-After: `retry_after_s`, for ever
    quota              429 insufficient_quota (OpenAI's billing error), no Retry-After

Every request is counted per shape (`counts`).
"""

from __future__ import annotations

import gzip
import json
import socket
import socketserver
import threading
from typing import Any

DEEP = 100_000
FAULT_SHAPES = ("big-int", "big-int-400", "big-int-401", "rate-limit", "quota")


def completion(text: str, reasoning: str | None = None, ollama: bool = False) -> bytes:
    if ollama:
        msg: dict[str, Any] = {"role": "assistant", "content": text}
        if reasoning is not None:
            msg["thinking"] = reasoning
        return json.dumps({"model": "m", "message": msg, "done": True, "done_reason": "stop"}).encode()
    msg = {"role": "assistant", "content": text}
    if reasoning is not None:
        msg["reasoning_content"] = reasoning
    choice = {"index": 0, "finish_reason": "stop", "message": msg}
    return json.dumps({"id": "x", "object": "chat.completion", "model": "m", "choices": [choice]}).encode()


class HostileServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, drip_s: float = 0.5, bomb_mb: int = 256):
        super().__init__(("127.0.0.1", 0), HostileHandler)
        self.drip_s = drip_s
        self.stopping = threading.Event()  # ends every drip and hold at stop()
        self.release = threading.Event()
        self.received = threading.Event()
        self.lock = threading.Lock()
        self.counts: dict[str, int] = {}
        self.retry_after_s = 1.0
        self._bomb_mb = bomb_mb
        self._bomb: bytes | None = None

    @property
    def bomb(self) -> bytes:
        if self._bomb is None:
            self._bomb = gzip.compress(b"\0" * (self._bomb_mb << 20), compresslevel=9)
        return self._bomb

    def url(self, shape: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/h/{shape}/v1"

    def start(self) -> HostileServer:
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self.release.set()
        self.shutdown()
        self.server_close()


class HostileHandler(socketserver.BaseRequestHandler):
    server: HostileServer

    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while self._one(sock):
                pass
        except OSError:
            pass  # the client gave up (what a deadline does): nothing more to send

    def _one(self, sock: socket.socket) -> bool:
        head = b""
        while b"\r\n\r\n" not in head:
            data = sock.recv(65536)
            if not data:
                return False
            head += data
        head, _, rest = head.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, target = lines[0].split(" ")[:2]
        headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in lines[1:])}
        length = int(headers.get("content-length", "0"))
        while len(rest) < length:
            data = sock.recv(65536)
            if not data:
                return False
            rest += data
        parts = target.split("/")
        shape = parts[2] if len(parts) > 2 and parts[1] == "h" else "ok"
        with self.server.lock:
            self.server.counts[shape] = self.server.counts.get(shape, 0) + 1
        self.server.received.set()
        return self._reply(sock, shape, method, target, headers)

    def _send(self, sock: socket.socket, status: str, body: bytes, extra: bytes = b"") -> bool:
        head = f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        sock.sendall(head.encode("latin-1") + extra + b"\r\n" + body)
        return True

    def _drip(self, sock: socket.socket, data: bytes) -> bool:
        for i in range(len(data)):
            if self.server.stopping.wait(self.server.drip_s):
                return False
            sock.sendall(data[i : i + 1])
        return False

    def _reply(self, sock: socket.socket, shape: str, method: str, target: str, headers: dict) -> bool:
        srv = self.server
        ollama = target.endswith("/api/chat")
        ok = completion("Answer: B", ollama=ollama)
        if shape in FAULT_SHAPES or shape.startswith("echo-key-cut-"):
            return self._fault(sock, shape, headers)
        if shape == "ok":
            return self._send(sock, "200 OK", ok)
        if shape == "drip-body":
            head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(ok)}\r\n\r\n"
            sock.sendall(head.encode("latin-1"))
            return self._drip(sock, ok)
        if shape == "drip-headers":
            sock.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
            return self._drip(sock, b"a" * 10_000)
        if shape == "surrogate-content":
            body = completion("Answer: B", ollama=ollama).replace(b"Answer: B", b"Answer: B \\ud800")
            return self._send(sock, "200 OK", body)
        if shape == "surrogate-reasoning":
            return self._send(
                sock,
                "200 OK",
                completion("Answer: B", "think \\udfff", ollama).replace(b"\\\\udfff", b"\\udfff"),
            )
        if shape == "surrogate-error":
            return self._send(sock, "400 Bad Request", b'{"error":{"message":"bad \\ud800 request"}}')
        if shape == "surrogate-header":
            return self._send(sock, "200 OK", ok, b"X-Note: caf\xed\xa0\x80\xff\r\n")
        if shape == "gzip-bomb":
            return self._send(sock, "200 OK", srv.bomb, b"Content-Encoding: gzip\r\n")
        if shape == "deep":
            return self._send(sock, "200 OK", b"[" * DEEP + b"]" * DEEP)
        if shape == "retry-after":
            return self._send(
                sock,
                "429 Too Many Requests",
                b'{"error":{"message":"slow down"}}',
                b"Retry-After: 1000000000\r\n",
            )
        if shape == "echo-key":
            echoed = f"you sent Authorization: {headers.get('authorization', '')}"
            return self._send(sock, "200 OK", completion(echoed, ollama=ollama))
        if shape == "echo-url":
            msg = json.dumps({"error": {"message": f"no route {method} {target}"}}).encode()
            return self._send(sock, "404 Not Found", msg)
        if shape == "hold":
            srv.release.wait()
            return self._send(sock, "200 OK", ok)
        return self._send(sock, "400 Bad Request", b'{"error":{"message":"unknown shape"}}')

    def _fault(self, sock: socket.socket, shape: str, headers: dict) -> bool:
        if shape.startswith("echo-key-cut-"):
            return self._echo_key_cut(sock, shape, headers.get("authorization", ""))
        if shape in ("big-int", "big-int-400", "big-int-401"):
            body = b'{"error": {"message": "big", "code": ' + b"9" * 5000 + b"}}"
            status = {"big-int-400": "400 Bad Request", "big-int-401": "401 Unauthorized"}
            return self._send(sock, status.get(shape, "200 OK"), body)
        if shape == "rate-limit":
            retry = f"Retry-After: {self.server.retry_after_s}\r\n".encode()
            return self._send(sock, "429 Too Many Requests", b'{"error":{"message":"slow down"}}', retry)
        if shape == "quota":
            err = {
                "message": "You exceeded your current quota, please check your plan and billing details.",
                "type": "insufficient_quota",
                "code": "insufficient_quota",
            }
            return self._send(sock, "429 Too Many Requests", json.dumps({"error": err}).encode())
        raise AssertionError(shape)

    def _echo_key_cut(self, sock: socket.socket, shape: str, auth: str) -> bool:
        """The Authorization header echoed so that the key ends 2 characters past the length at
        which the client once cut the message: the cut left all the key but its last 2."""
        if shape == "echo-key-cut-401":  # the message: "<pad>" + auth, cut at 500
            text = "x" * (502 - len(auth)) + auth
            return self._send(sock, "401 Unauthorized", json.dumps({"error": {"message": text}}).encode())
        if shape == "echo-key-cut-html":  # the excerpt of the body, cut at 200
            page = "<html>" + "x" * (202 - len(auth) - 6) + auth + "</html>"
            return self._send(sock, "200 OK", page.encode())
        refusal = "x" * (302 - len(auth)) + auth  # "model refused: " + refusal[:300]
        msg = {"role": "assistant", "content": None, "refusal": refusal}
        body = {"id": "x", "model": "m", "choices": [{"index": 0, "finish_reason": "stop", "message": msg}]}
        return self._send(sock, "200 OK", json.dumps(body).encode())
