"""Pluggable HTTP transport: the only code that touches the network.

A transport POSTs a JSON body and returns the raw response (status, headers, at most
`max_bytes` of body). Network failures are raised as `TransportError` with a `kind`:

    connect   - could not connect (refused, DNS, unreachable)
    timeout   - connect/read timed out
    reset     - connection reset / closed before a response arrived
    truncated - the body ended before its announced length
    too_large - the body exceeded max_bytes (reading stopped there)
    invalid_request - the request cannot be sent as given (e.g. a header value HTTP forbids);
                the same request would fail again, so it is never retried

The runner is async; `AsyncTransport` is the native protocol. A blocking transport (e.g. one
built on QGIS's QgsBlockingNetworkRequest) implements `SyncTransport` and is wrapped with
`ThreadedTransport`, which runs each call in a worker thread.
"""

from __future__ import annotations

import asyncio
import http.client
import importlib.util
import inspect
import json
import socket
import ssl
import sys
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import httpx

# httpcore calls `import sniffio` on every request; anyio >= 4.12 no longer pulls sniffio in, and
# a failed import is retried (a sys.path scan) each time - about 0.15 ms per request. Caching
# the absence makes the import fail immediately, with the same outcome ("asyncio").
if importlib.util.find_spec("sniffio") is None:
    sys.modules.setdefault("sniffio", None)  # type: ignore[arg-type]

DEFAULT_MAX_BYTES = 8 * 1024 * 1024


@dataclass
class Response:
    status: int
    headers: dict[str, str] = field(default_factory=dict)  # lower-cased names
    body: bytes = b""


class TransportError(Exception):
    KINDS = ("connect", "timeout", "reset", "truncated", "too_large", "invalid_request")

    def __init__(self, kind: str, message: str, partial: bytes = b"", status: int | None = None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.partial = partial
        self.status = status


@runtime_checkable
class AsyncTransport(Protocol):
    async def post_json(
        self, url: str, headers: dict[str, str], body: Any, timeout: float, max_bytes: int = DEFAULT_MAX_BYTES
    ) -> Response: ...


@runtime_checkable
class SyncTransport(Protocol):
    def post_json(
        self, url: str, headers: dict[str, str], body: Any, timeout: float, max_bytes: int = DEFAULT_MAX_BYTES
    ) -> Response: ...


# Either flavour is accepted wherever a transport is expected.
Transport = AsyncTransport | SyncTransport


def encode_body(body: Any) -> bytes:
    if isinstance(body, (bytes, bytearray)):
        return bytes(body)
    return json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8")


class HttpxTransport:
    """Default transport: pooled `httpx.AsyncClient`s, streaming reads capped at max_bytes.

    httpcore's pool does O(pool size) work per request and per state change, which dominates
    at high concurrency; requests are therefore spread round-robin over several clients
    ("shards") of at most `shard_size` connections each (keep-alive still applies per shard).
    """

    def __init__(self, max_connections: int = 256, verify: bool = True, shard_size: int = 8):
        self._shards_n = max(1, -(-max_connections // shard_size))
        per = max(1, -(-max_connections // self._shards_n))
        self._limits = httpx.Limits(max_connections=per, max_keepalive_connections=per)
        self._verify = verify
        self._ssl_context: ssl.SSLContext | None = None
        self._clients: list[httpx.AsyncClient] = []
        self._next = 0
        self._loop: asyncio.AbstractEventLoop | None = None

    def _get_client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if not self._clients or self._loop is not loop:
            # Clients are bound to the loop they were first used on. One SSL context is shared:
            # building one per client (loading the CA bundle) costs ~30 ms each.
            if self._ssl_context is None and self._verify:
                self._ssl_context = ssl.create_default_context()
                try:
                    import certifi  # optional: a current CA bundle where the system's is old

                    self._ssl_context.load_verify_locations(certifi.where())
                except (ImportError, OSError):
                    pass
            verify: ssl.SSLContext | bool = self._ssl_context if self._ssl_context is not None else False
            self._clients = [
                httpx.AsyncClient(limits=self._limits, verify=verify, follow_redirects=False, trust_env=False)
                for _ in range(self._shards_n)
            ]
            self._loop = loop
        self._next = (self._next + 1) % len(self._clients)
        return self._clients[self._next]

    async def post_json(
        self, url: str, headers: dict[str, str], body: Any, timeout: float, max_bytes: int = DEFAULT_MAX_BYTES
    ) -> Response:
        client = self._get_client()
        data = encode_body(body)
        hdrs = {"content-type": "application/json", "accept": "application/json", **headers}
        to = httpx.Timeout(timeout, connect=min(timeout, 30.0))
        buf = bytearray()
        try:
            async with client.stream("POST", url, content=data, headers=hdrs, timeout=to) as r:
                status = r.status_code
                rh = {k.lower(): v for k, v in r.headers.items()}
                async for chunk in r.aiter_bytes():
                    buf += chunk
                    if len(buf) > max_bytes:
                        raise TransportError(
                            "too_large",
                            f"response larger than {max_bytes} bytes",
                            bytes(buf[:max_bytes]),
                            status,
                        )
                return Response(status, rh, bytes(buf))
        except TransportError:
            raise
        except httpx.TimeoutException as exc:
            raise TransportError("timeout", f"timed out after {timeout:g} s ({type(exc).__name__})") from None
        except (httpx.LocalProtocolError, UnicodeEncodeError) as exc:
            raise TransportError("invalid_request", f"request not sendable: {_short(exc)}") from None
        except httpx.ConnectError as exc:
            raise TransportError("connect", f"cannot connect: {_short(exc)}") from None
        except httpx.RemoteProtocolError as exc:
            msg = _short(exc)
            kind = "truncated" if (buf or "incomplete" in msg.lower() or "body" in msg.lower()) else "reset"
            raise TransportError(kind, msg, bytes(buf)) from None
        except (httpx.ReadError, httpx.WriteError, httpx.NetworkError) as exc:
            raise TransportError("truncated" if buf else "reset", _short(exc), bytes(buf)) from None
        except httpx.HTTPError as exc:
            raise TransportError("reset", _short(exc), bytes(buf)) from None

    async def aclose(self) -> None:
        clients, self._clients = self._clients, []
        for c in clients:
            await c.aclose()


def _short(exc: BaseException) -> str:
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


class UrllibTransport:
    """A blocking stdlib transport (reference `SyncTransport`; use through ThreadedTransport)."""

    def post_json(
        self, url: str, headers: dict[str, str], body: Any, timeout: float, max_bytes: int = DEFAULT_MAX_BYTES
    ) -> Response:
        try:
            for value in headers.values():
                value.encode("latin-1")
        except UnicodeEncodeError as exc:
            raise TransportError("invalid_request", f"request not sendable: {_short(exc)}") from None
        req = urllib.request.Request(
            url,
            data=encode_body(body),
            method="POST",
            headers={"Content-Type": "application/json", **headers},
        )
        try:
            try:
                resp = urllib.request.urlopen(req, timeout=timeout)
            except urllib.error.HTTPError as err:
                resp = err
            with resp:
                data = resp.read(max_bytes + 1)
                if len(data) > max_bytes:
                    raise TransportError(
                        "too_large", f"response larger than {max_bytes} bytes", data[:max_bytes], resp.status
                    )
                return Response(resp.status, {k.lower(): v for k, v in resp.headers.items()}, data)
        except TransportError:
            raise
        except TimeoutError:
            raise TransportError("timeout", f"timed out after {timeout:g} s") from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, (TimeoutError, socket.timeout)):
                raise TransportError("timeout", f"timed out after {timeout:g} s") from None
            if isinstance(reason, (ConnectionRefusedError, socket.gaierror)) or isinstance(reason, str):
                raise TransportError("connect", f"cannot connect: {reason}") from None
            raise TransportError("reset", f"{type(reason).__name__}: {reason}") from None
        except http_incomplete() as exc:
            raise TransportError("truncated", f"IncompleteRead: {exc!r}"[:200]) from None
        except (ConnectionError, OSError) as exc:
            raise TransportError("reset", f"{type(exc).__name__}: {exc}") from None


def http_incomplete() -> tuple[type[Exception], ...]:
    return (http.client.IncompleteRead, http.client.RemoteDisconnected)


class ThreadedTransport:
    """Adapts a blocking `SyncTransport` to the async runner (each call in a worker thread)."""

    def __init__(self, sync: SyncTransport, max_workers: int = 64):
        self.sync = sync
        self._max_workers = max_workers
        self._executor: ThreadPoolExecutor | None = None

    async def post_json(
        self, url: str, headers: dict[str, str], body: Any, timeout: float, max_bytes: int = DEFAULT_MAX_BYTES
    ) -> Response:
        if self._executor is None:  # asyncio's default pool has only cpu+4 threads
            self._executor = ThreadPoolExecutor(self._max_workers, thread_name_prefix="transport")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._executor, self.sync.post_json, url, headers, body, timeout, max_bytes
        )

    async def aclose(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False)
            self._executor = None


def as_async(transport: Any | None) -> Any:
    """Return an async transport: default httpx, async as-is, sync wrapped in a thread adapter."""
    if transport is None:
        return HttpxTransport()
    if inspect.iscoroutinefunction(getattr(transport, "post_json", None)):
        return transport
    if callable(getattr(transport, "post_json", None)):
        return ThreadedTransport(transport)
    raise TypeError("transport must have a post_json(url, headers, body, timeout) method")
