"""The headless client's transport: a pooled aiohttp session (QGIS uses its own network stack).

aiohttp, not httpx: on the main job's loopback agents httpx spent ~1.9 ms of client CPU per
request in its pool and stream layers, aiohttp ~0.25 ms (same requests, `make bench`), and the
sweep's single client process is what paces the runs.
"""

from __future__ import annotations

import asyncio
import io
import ssl
import zlib
from typing import Any

import aiohttp

from scoring.runner.transport import DEFAULT_MAX_BYTES, Response, TransportError, _short, encode_body

CONNECT_TIMEOUT_S = 30.0
READ_CHUNK = 1 << 16
LARGE_BODY = 1 << 20  # aiohttp's own threshold for a bytes body


class AiohttpTransport:
    """Default transport: one `aiohttp.ClientSession` per event loop, at most `max_connections`
    connections (kept alive), responses streamed and capped at max_bytes."""

    def __init__(self, max_connections: int = 256, verify: bool = True):
        self._max_connections = max(1, max_connections)
        self._verify = verify
        self._ssl_context: ssl.SSLContext | None = None
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _ssl(self) -> ssl.SSLContext | bool:
        if not self._verify:
            return False
        if self._ssl_context is None:
            self._ssl_context = ssl.create_default_context()
            try:
                import certifi  # optional: a current CA bundle where the system's is old

                self._ssl_context.load_verify_locations(certifi.where())
            except (ImportError, OSError):
                pass
        return self._ssl_context

    def _get_session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is None or self._loop is not loop or self._session.closed:
            # A session is bound to the loop it was made on (asyncio.run makes a new one per run).
            connector = aiohttp.TCPConnector(limit=self._max_connections, ssl=self._ssl())
            self._session = aiohttp.ClientSession(
                connector=connector,
                trust_env=False,  # no proxy or .netrc from the environment: the config says where to go
                # decompressed here, with a cap on the output (a gzip bomb costs the cap, not its size)
                auto_decompress=False,
                skip_auto_headers=("User-Agent",),
            )
            self._loop = loop
        return self._session

    async def post_json(
        self, url: str, headers: dict[str, str], body: Any, timeout: float, max_bytes: int = DEFAULT_MAX_BYTES
    ) -> Response:
        try:
            for value in headers.values():
                value.encode("latin-1")  # what HTTP/1.1 can carry; aiohttp would send it mangled
        except UnicodeEncodeError as exc:
            raise TransportError("invalid_request", f"request not sendable: {_short(exc)}") from None
        session = self._get_session()
        raw = encode_body(body)
        # map sets: aiohttp sends a file-like body in chunks (and warns on megabytes of bytes)
        data = io.BytesIO(raw) if len(raw) > LARGE_BODY else raw
        hdrs = {
            "content-type": "application/json",
            "accept": "application/json",
            "accept-encoding": "gzip, deflate",  # what `_Inflater` decodes
            **headers,
        }
        # `timeout` bounds the whole exchange (connect, headers, body): a server dripping a byte
        # a second passes every per-read timeout. aiohttp's `total` covers it; the asyncio guard
        # also covers what happens between aiohttp's reads.
        connect = min(timeout, CONNECT_TIMEOUT_S)
        to = aiohttp.ClientTimeout(total=timeout, sock_connect=connect, sock_read=timeout)
        buf = bytearray()
        try:
            async with asyncio.timeout(timeout):
                async with session.post(url, data=data, headers=hdrs, timeout=to, allow_redirects=False) as r:
                    status = r.status
                    rh = {k.lower(): v for k, v in r.headers.items()}
                    inflater = _Inflater(rh.get("content-encoding", ""), max_bytes)
                    async for chunk in r.content.iter_chunked(READ_CHUNK):
                        buf += inflater.feed(chunk)
                        _cap(buf, max_bytes, status)
                    buf += inflater.flush()
                    _cap(buf, max_bytes, status)
                    return Response(status, rh, bytes(buf))
        except TransportError:
            raise
        except (TimeoutError, aiohttp.ServerTimeoutError) as exc:
            why = f"no complete reply, {type(exc).__name__}"
            raise TransportError("timeout", f"timed out after {timeout:g} s ({why})") from None
        except (aiohttp.InvalidURL, ValueError) as exc:
            raise TransportError("invalid_request", f"request not sendable: {_short(exc)}") from None
        except aiohttp.ClientConnectorError as exc:
            raise TransportError("connect", f"cannot connect: {_short(exc)}") from None
        except aiohttp.ClientPayloadError as exc:
            raise TransportError("truncated", _short(exc), bytes(buf)) from None
        except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError, aiohttp.ClientResponseError) as exc:
            raise TransportError("truncated" if buf else "reset", _short(exc), bytes(buf)) from None
        except (aiohttp.ClientError, OSError) as exc:
            raise TransportError("truncated" if buf else "reset", _short(exc), bytes(buf)) from None

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None and not session.closed:
            await session.close()


def _cap(buf: bytearray, max_bytes: int, status: int) -> None:
    if len(buf) > max_bytes:
        too_large = f"response larger than {max_bytes} bytes"
        raise TransportError("too_large", too_large, bytes(buf[:max_bytes]), status)


class _Inflater:
    """Decodes a gzip or deflate body chunk by chunk, never producing more than the cap plus one
    byte at a time (zlib's ``max_length``): memory stays bounded by the cap whatever the ratio."""

    def __init__(self, encoding: str, max_bytes: int):
        enc = encoding.strip().lower()
        self._enc = enc
        self._max = max_bytes
        self._raw_fallback = enc == "deflate"  # servers send zlib-wrapped or raw deflate
        self._z: Any = None
        if enc in ("gzip", "x-gzip"):
            self._z = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif enc == "deflate":
            self._z = zlib.decompressobj(zlib.MAX_WBITS)
        self._produced = 0

    def feed(self, chunk: bytes) -> bytes:
        if self._z is None:
            return chunk
        out = bytearray()
        data = chunk
        try:
            while data and self._produced <= self._max:
                piece = self._z.decompress(data, self._max + 1 - self._produced)
                self._produced += len(piece)
                out += piece
                data = self._z.unconsumed_tail
        except zlib.error as exc:
            if self._raw_fallback and self._produced == 0:
                self._raw_fallback = False
                self._z = zlib.decompressobj(-zlib.MAX_WBITS)
                return self.feed(chunk)
            raise TransportError("bad_encoding", f"corrupt {self._enc} body: {exc}") from None
        return bytes(out)

    def flush(self) -> bytes:
        if self._z is None or self._produced > self._max:
            return b""
        return self._z.flush(self._max + 1 - self._produced)
