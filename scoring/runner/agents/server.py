"""Agents behind a real OpenAI-compatible HTTP server on loopback.

It behaves as a real server does for what clients and proxies (LiteLLM, chat UIs) send:
``stream: true`` is answered with server-sent events, ``GET /v1/models[/ID]`` lists the one
model, a request naming another model gets 404 ``model_not_found``, and chunked request bodies
are read."""

from __future__ import annotations

import concurrent.futures
import itertools
import json
import logging
import multiprocessing
import random
import signal
import socket
import sys
import threading
import time
from http.server import ThreadingHTTPServer
from typing import Any

from scoring.errors import InputError
from scoring.runner.agents.prompt_view import message_text
from scoring.runner.agents.registry import OFFLOADED, PIXEL_BLIND, AgentFn, get_agent, without_images
from scoring.runner.agents.request_body import loads_request
from scoring.runner.agents.request_head import FastHeadMixin
from scoring.support.process import fewer_collections, keep_freed_memory

log = logging.getLogger(__name__)


# A request's body, refused (413) above this before a byte of it is read: the largest real
# request, a map set's, is a few megabytes of base64.
MAX_BODY = 64 * 1024 * 1024
# Bodies up to this size get their buffer at once (one recv with MSG_WAITALL); larger ones grow
# as bytes arrive, so a client announcing a large Content-Length costs only what it sends.
PREALLOC = 8 * 1024 * 1024
_SCENE_FENCE = "```geojson"
STREAM_CHUNK = 64  # characters of the reply per server-sent event


class _BadRequestError(Exception):
    pass


# Completion ids need only be unique: uuid4 read the OS's random source on every reply.
_ids = random.Random()


def _completion_id() -> str:
    return f"chatcmpl-{_ids.getrandbits(96):024x}"


def _usage(text: str, messages: list[dict]) -> dict:
    prompt_chars = sum(len(message_text(m.get("content"))) for m in messages)  # images not decoded
    pt, ct = max(1, prompt_chars // 4), max(1, len(text) // 4)
    return {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct}


def _completion(model: str, text: str, messages: list[dict]) -> dict:
    return {
        "id": _completion_id(),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": _usage(text, messages),
    }


def _stream_events(model: str, text: str, messages: list[dict], with_usage: bool) -> list[dict]:
    """The ``chat.completion.chunk`` events of a streamed reply (OpenAI's format)."""
    head: dict[str, Any] = {"id": _completion_id(), "object": "chat.completion.chunk"}
    head.update({"created": int(time.time()), "model": model})

    def chunk(delta: dict, finish: str | None = None) -> dict:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": text[i : i + STREAM_CHUNK]}) for i in range(0, len(text), STREAM_CHUNK)]
    events.append(chunk({}, "stop"))
    if with_usage:
        events.append({**head, "choices": [], "usage": _usage(text, messages)})
    return events


def _pool_init(name: str) -> None:
    get_agent(name)  # import the agent modules once per worker process


def _pool_call(name: str, messages: list[dict]) -> str:
    return str(get_agent(name)(messages))


class AgentServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], agent_name: str, fn: AgentFn, workers: int = 1):
        self.agent_name, self.agent_fn = agent_name, fn
        # CPU-bound agents (tools searches edits) would serialise on the GIL in one process;
        # a spawn-based pool lets one server use every core. Spawn, not fork: the server is
        # threaded and forking a threaded process can deadlock.
        # One single-process pool per worker, each given the requests of its own scenes (by the
        # scene's text): the other form and modality of an instance then find its answer in
        # that worker's memo (scoring.runner.agents.answer_memo) instead of computing it again.
        self.pools = [
            concurrent.futures.ProcessPoolExecutor(
                1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_pool_init,
                initargs=(agent_name,),
            )
            for _ in range(workers if workers > 1 else 0)
        ]
        self._turns = itertools.count()
        super().__init__(address, AgentHandler)

    def reply(self, messages: list[dict]) -> str:
        offload = OFFLOADED.get(self.agent_name)
        if not self.pools or (offload is not None and not offload(messages)):
            return str(self.agent_fn(messages))
        pool = self.pools[self._worker_of(messages)]
        if self.agent_name in PIXEL_BLIND:
            messages = without_images(messages)
        return pool.submit(_pool_call, self.agent_name, messages).result()

    def _worker_of(self, messages: list[dict]) -> int:
        """The worker of the request's scene (the GeoJSON block of its first user turn); requests
        without one take turns."""
        user = next((m for m in messages if m.get("role") == "user"), None)
        text = message_text(user.get("content")) if user is not None else ""
        start = text.find(_SCENE_FENCE)
        if start < 0:
            return next(self._turns) % len(self.pools)
        end = text.find("```", start + len(_SCENE_FENCE))
        return hash(text[start:end]) % len(self.pools)

    def server_close(self) -> None:
        super().server_close()
        for pool in self.pools:
            pool.shutdown(wait=False, cancel_futures=True)

    @property
    def base_url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}/v1"


class AgentHandler(FastHeadMixin):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # a streamed reply is many writes: avoid 40 ms delayed-ACK stalls
    # Buffered: a reply's headers and body leave in one send when the request is done (an
    # unbuffered writer made two sends, each a trip through the loopback TCP stack).
    wbufsize = 1 << 16
    server: AgentServer

    def log_message(self, fmt: str, *args: Any) -> None:
        if log.isEnabledFor(logging.DEBUG):
            log.debug("%s " + fmt, self.address_string(), *args)

    def _send(self, status: int, payload: dict) -> None:
        body = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, message: str, typ: str = "invalid_request_error", code: str = "") -> None:
        self._send(status, {"error": {"message": message, "type": typ, "code": code or None}})

    def _model_card(self) -> dict:
        return {"id": self.server.agent_name, "object": "model", "created": 0, "owned_by": "spatialgap"}

    def do_GET(self) -> None:  # noqa: N802 - the name BaseHTTPRequestHandler dispatches to
        path = self.path.split("?", 1)[0].rstrip("/")
        if path in ("/v1/models", "/models"):
            self._send(200, {"object": "list", "data": [self._model_card()]})
        elif path.startswith(("/v1/models/", "/models/")):
            model = path.split("/models/", 1)[1]
            if model == self.server.agent_name:
                self._send(200, self._model_card())
            else:
                self._unknown_model(model)
        else:
            self._error(404, f"no route GET {self.path}")

    def _unknown_model(self, model: str) -> None:
        self._error(
            404,
            f"The model {model!r} does not exist (this server serves {self.server.agent_name!r})",
            code="model_not_found",
        )

    def _read_body(self) -> bytes | bytearray:
        """The request body, sent with Content-Length or chunked (as proxies may send it)."""
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            parts: list[bytes] = []
            total = 0
            while True:
                size_line = self.rfile.readline(1024)
                try:
                    size = int(size_line.split(b";", 1)[0].strip() or b"x", 16)
                except ValueError:
                    raise _BadRequestError("malformed chunked body") from None
                if size == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(parts)
                total += size
                if total > MAX_BODY:
                    raise _BadRequestError("request too large")
                parts.append(self.rfile.read(size))
                self.rfile.readline(8)  # the CRLF after each chunk
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            raise _BadRequestError("invalid Content-Length") from None
        if length < 0:
            raise _BadRequestError("invalid Content-Length")
        if length > MAX_BODY:
            raise _BadRequestError(f"request too large (Content-Length {length} > {MAX_BODY} bytes)")
        if length > PREALLOC:
            return self._read_growing(length)
        return self._read_exactly(length)

    def _read_growing(self, length: int) -> bytes:
        """`length` bytes of the request (fewer if the client hangs up), the buffer growing with
        what arrives."""
        body = bytearray()
        while len(body) < length:
            chunk = self.rfile.read1(min(1 << 20, length - len(body)))
            if not chunk:
                break
            body += chunk
        return bytes(body)

    def _read_exactly(self, length: int) -> bytes | bytearray:
        """`length` bytes of the request (fewer if the client hangs up), read in one or two system
        calls: what the buffered reader holds, then the rest straight from the socket with
        MSG_WAITALL. Reading a map's half megabyte through the buffered reader made a call per
        arriving segment, each releasing and retaking the GIL among the server's threads."""
        body = bytearray(length)
        view = memoryview(body)
        got = self.rfile.readinto1(view) if length else 0  # the reader's buffer first: it is then empty
        while 0 < got < length:
            n = self.connection.recv_into(view[got:], length - got, socket.MSG_WAITALL)
            if n == 0:
                break
            got += n
        return body if got == length else bytes(view[:got])

    def do_POST(self) -> None:  # noqa: N802 - the name BaseHTTPRequestHandler dispatches to
        if self.path.split("?", 1)[0].rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._error(404, f"no route POST {self.path}")
            return
        try:
            # an agent that does not read the pixels is not given them (nor are they decoded)
            blank = self.server.agent_name in PIXEL_BLIND
            req = loads_request(self._read_body() or b"null", blank_images=blank)
        except _BadRequestError as exc:
            self.close_connection = True
            self._error(413 if "large" in str(exc) else 400, str(exc))
            return
        except ValueError:
            self._error(400, "the request body is not JSON")
            return
        except RecursionError:
            self._error(400, "the request body is JSON nested too deeply")
            return
        messages = req.get("messages") if isinstance(req, dict) else None
        if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
            self._error(400, "'messages' must be a list of message objects")
            return
        model = req.get("model")
        if model is not None and model != self.server.agent_name:
            self._unknown_model(str(model))
            return
        try:
            text = self.server.reply(messages)
        except Exception as exc:  # an agent bug is a 500 for that request, not a dead server
            log.exception("agent %s failed", self.server.agent_name)
            self._error(
                500, f"agent {self.server.agent_name} failed: {type(exc).__name__}: {exc}", "server_error"
            )
            return
        if req.get("stream") is True:
            options = req.get("stream_options")
            usage = isinstance(options, dict) and options.get("include_usage") is True
            self._send_stream(_stream_events(self.server.agent_name, text, messages, usage))
        else:
            self._send(200, _completion(self.server.agent_name, text, messages))

    def _send_stream(self, events: list[dict]) -> None:
        """Server-sent events, one chunk each, then ``data: [DONE]``; the connection closes at
        the end (no Content-Length is known in advance)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        for event in events:
            self.wfile.write(b"data: " + json.dumps(event).encode("utf-8") + b"\n\n")
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def start_server(name: str, host: str = "127.0.0.1", port: int = 0) -> tuple[AgentServer, threading.Thread]:
    """Start agent `name` in a background thread (port 0: a free port); returns (server, thread)."""
    server = AgentServer((host, port), name, get_agent(name))
    thread = threading.Thread(target=server.serve_forever, name=f"agent-{name}", daemon=True)
    thread.start()
    return server, thread


def start_agent_server(name: str, host: str = "127.0.0.1", port: int = 0) -> tuple[str, AgentServer]:
    """Serve built-in agent `name` (tools, centroid, chance, ...) as an OpenAI-compatible endpoint
    in a background thread: (its base URL, for `run --endpoint` or a model config, and the server;
    `server.shutdown()` stops it)."""
    server, _ = start_server(name, host, port)
    return server.base_url, server


def serve(name: str, host: str = "127.0.0.1", port: int = 8765, workers: int = 1) -> int:
    """Serve agent `name` until interrupted or terminated (blocking). Port 0 picks a free port
    (the URL is printed on stderr)."""
    fn = get_agent(name)
    keep_freed_memory()  # the serving process is ours alone (not so a caller of start_server)
    fewer_collections()  # its memos grow request after request
    if host not in ("127.0.0.1", "localhost", "::1"):
        log.warning("serving on non-loopback address %s", host)
    if workers < 1:
        raise InputError(f"--workers: must be >= 1, got {workers}")
    try:
        server = AgentServer((host, port), name, fn, workers)
    except OSError as exc:
        raise InputError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    print(f"serving agent {name} on {server.base_url} (Ctrl-C to stop)", file=sys.stderr, flush=True)

    def _terminate(signum, frame):  # SIGTERM -> same clean shutdown as Ctrl-C (pool included)
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
