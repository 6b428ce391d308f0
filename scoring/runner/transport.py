"""Pluggable HTTP transport: the only code that touches the network.

A transport POSTs a JSON body and returns the raw response (status, headers, at most
`max_bytes` of body). Network failures are raised as `TransportError` with a `kind`:

    connect   - could not connect (refused, DNS, unreachable)
    timeout   - no complete reply within the timeout (connect + headers + body, one deadline)
    reset     - connection reset / closed before a response arrived
    truncated - the body ended before its announced length
    too_large - the body exceeded max_bytes (reading stopped there)
    bad_encoding - the body's gzip/deflate stream is corrupt (recorded, not retried)
    invalid_request - the request cannot be sent as given (e.g. a header value HTTP forbids);
                the same request would fail again, so it is never retried

The runner is async; `AsyncTransport` is the native protocol. A blocking transport (e.g. one
built on QGIS's QgsBlockingNetworkRequest) implements `SyncTransport` and is wrapped with
`ThreadedTransport`, which runs each call in a worker thread.
"""

from __future__ import annotations

import asyncio
import http.client
import inspect
import json
import socket
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

DEFAULT_MAX_BYTES = 8 * 1024 * 1024


@dataclass
class Response:
    status: int
    headers: dict[str, str] = field(default_factory=dict)  # lower-cased names
    body: bytes = b""


class TransportError(Exception):
    KINDS = ("connect", "timeout", "reset", "truncated", "too_large", "invalid_request", "bad_encoding")

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


class DataURL(str):
    """A base64 data URL (what `png_data_url` makes): only characters JSON copies verbatim, so
    `encode_body` splices its bytes into the body instead of running the JSON encoder over a
    megabyte of a map on every request. Equal to, and usable as, the plain string."""

    __slots__ = ()


def encode_body(body: Any) -> bytes:
    if isinstance(body, (bytes, bytearray)):
        return bytes(body)
    blobs: list[DataURL] = []
    light = _without_data_urls(body, blobs)
    # ASCII escapes: the same JSON value as the UTF-8 text, in 7-bit bytes
    text = json.dumps(light, ensure_ascii=True, allow_nan=False).encode("ascii")
    if not blobs:
        return text
    parts = text.split(_SLOT)
    if len(parts) != len(blobs) + 1:  # the text itself held the mark: encode the plain way
        return json.dumps(body, ensure_ascii=True, allow_nan=False).encode("ascii")
    out = [parts[0]]
    for blob, after in zip(blobs, parts[1:], strict=True):
        out += [blob.encode("ascii"), after]
    return b"".join(out)


# Stands for one data URL inside its JSON quotes; a private-use character, escaped as \ue000.
_SLOT_TEXT = "\ue000sg-data-url\ue000"
_SLOT = json.dumps(_SLOT_TEXT, ensure_ascii=True)[1:-1].encode("ascii")


def _without_data_urls(value: Any, blobs: list[DataURL]) -> Any:
    if isinstance(value, DataURL):
        blobs.append(value)
        return _SLOT_TEXT
    if isinstance(value, dict):
        return {k: _without_data_urls(v, blobs) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_without_data_urls(v, blobs) for v in value]
    return value


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
        deadline = time.monotonic() + timeout  # the body too: a drip passes each read's timeout
        try:
            try:
                resp = urllib.request.urlopen(req, timeout=timeout)
            except urllib.error.HTTPError as err:
                resp = err
            with resp:
                data = _read_until(resp, max_bytes + 1, deadline)
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


def _read_until(resp: Any, limit: int, deadline: float) -> bytes:
    """At most ``limit`` bytes of ``resp``, raising a timeout once ``deadline`` has passed."""
    out = bytearray()
    while len(out) < limit:
        chunk = getattr(resp, "read1", resp.read)(min(1 << 16, limit - len(out)))
        if not chunk:
            break
        out += chunk
        if time.monotonic() > deadline:
            raise TimeoutError
    return bytes(out)


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
    """Return an async transport: default aiohttp, async as-is, sync wrapped in a thread adapter."""
    if transport is None:
        # aiohttp only for the headless client: inside QGIS the plugin passes its own transport
        from scoring.runner.http_transport import AiohttpTransport

        return AiohttpTransport()
    if inspect.iscoroutinefunction(getattr(transport, "post_json", None)):
        return transport
    if callable(getattr(transport, "post_json", None)):
        return ThreadedTransport(transport)
    raise TypeError("transport must have a post_json(url, headers, body, timeout) method")
