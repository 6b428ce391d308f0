"""The headless client's transport: pooled httpx clients (QGIS uses its own network stack instead)."""

from __future__ import annotations

import asyncio
import importlib.util
import ssl
import sys
from typing import Any

import httpx

from scoring.runner.transport import DEFAULT_MAX_BYTES, Response, TransportError, _short, encode_body

# httpcore calls `import sniffio` on every request; anyio >= 4.12 no longer pulls sniffio in, and
# a failed import is retried (a sys.path scan) each time - about 0.15 ms per request. Caching
# the absence makes the import fail immediately, with the same outcome ("asyncio").
if importlib.util.find_spec("sniffio") is None:
    sys.modules.setdefault("sniffio", None)  # type: ignore[arg-type]


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
