"""Agents behind a real OpenAI-compatible HTTP server on loopback.

It behaves as a real server does for what clients and proxies (LiteLLM, chat UIs) send:
``stream: true`` is answered with server-sent events, ``GET /v1/models[/ID]`` lists the one
model, a request naming another model gets 404 ``model_not_found``, and chunked request bodies
are read."""

from __future__ import annotations

import concurrent.futures
import json
import logging
import multiprocessing
import signal
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from scoring.errors import InputError
from scoring.runner.agents.prompt_view import message_text
from scoring.runner.agents.registry import PIXEL_BLIND, AgentFn, get_agent, without_images

log = logging.getLogger(__name__)


MAX_BODY = 256 * 1024 * 1024
STREAM_CHUNK = 64  # characters of the reply per server-sent event


class _BadRequestError(Exception):
    pass


def _usage(text: str, messages: list[dict]) -> dict:
    prompt_chars = sum(len(message_text(m.get("content"))) for m in messages)  # images not decoded
    pt, ct = max(1, prompt_chars // 4), max(1, len(text) // 4)
    return {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct}


def _completion(model: str, text: str, messages: list[dict]) -> dict:
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": _usage(text, messages),
    }


def _stream_events(model: str, text: str, messages: list[dict], with_usage: bool) -> list[dict]:
    """The ``chat.completion.chunk`` events of a streamed reply (OpenAI's format)."""
    head: dict[str, Any] = {"id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion.chunk"}
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
        self.pool = None
        if workers > 1:
            self.pool = concurrent.futures.ProcessPoolExecutor(
                workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_pool_init,
                initargs=(agent_name,),
            )
        super().__init__(address, AgentHandler)

    def reply(self, messages: list[dict]) -> str:
        if self.pool is None:
            return str(self.agent_fn(messages))
        if self.agent_name in PIXEL_BLIND:
            messages = without_images(messages)
        return self.pool.submit(_pool_call, self.agent_name, messages).result()

    def server_close(self) -> None:
        super().server_close()
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)

    @property
    def base_url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}/v1"


class AgentHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are separate writes: avoid 40 ms delayed-ACK stalls
    server: AgentServer

    def log_message(self, fmt: str, *args: Any) -> None:
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

    def _read_body(self) -> bytes:
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
        if length > MAX_BODY:
            raise _BadRequestError("request too large")
        return self.rfile.read(length)

    def do_POST(self) -> None:  # noqa: N802 - the name BaseHTTPRequestHandler dispatches to
        if self.path.split("?", 1)[0].rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._error(404, f"no route POST {self.path}")
            return
        try:
            req = json.loads(self._read_body() or b"null")
        except _BadRequestError as exc:
            self.close_connection = True
            self._error(413 if "large" in str(exc) else 400, str(exc))
            return
        except ValueError:
            self._error(400, "the request body is not JSON")
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


def serve(name: str, host: str = "127.0.0.1", port: int = 8765, workers: int = 1) -> int:
    """Serve agent `name` until interrupted or terminated (blocking). Port 0 picks a free port
    (the URL is printed on stderr)."""
    fn = get_agent(name)
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
