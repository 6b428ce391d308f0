"""The headless client's transport: a pooled aiohttp session (QGIS uses its own network stack).

aiohttp, not httpx: on the main job's loopback agents httpx spent ~1.9 ms of client CPU per
request in its pool and stream layers, aiohttp ~0.25 ms (same requests, `make bench`), and the
sweep's single client process is what paces the runs.
"""

from __future__ import annotations

import asyncio
import io
import ssl
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
                auto_decompress=True,
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
        hdrs = {"content-type": "application/json", "accept": "application/json", **headers}
        # httpx's semantics, which the config documents: `timeout` for connecting and for each
        # wait on the server, not a cap on the whole exchange.
        connect = min(timeout, CONNECT_TIMEOUT_S)
        to = aiohttp.ClientTimeout(total=None, sock_connect=connect, sock_read=timeout)
        buf = bytearray()
        try:
            async with session.post(url, data=data, headers=hdrs, timeout=to, allow_redirects=False) as r:
                status = r.status
                rh = {k.lower(): v for k, v in r.headers.items()}
                async for chunk in r.content.iter_chunked(READ_CHUNK):
                    buf += chunk
                    if len(buf) > max_bytes:
                        too_large = f"response larger than {max_bytes} bytes"
                        raise TransportError("too_large", too_large, bytes(buf[:max_bytes]), status)
                return Response(status, rh, bytes(buf))
        except TransportError:
            raise
        except (TimeoutError, aiohttp.ServerTimeoutError) as exc:
            raise TransportError("timeout", f"timed out after {timeout:g} s ({type(exc).__name__})") from None
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
