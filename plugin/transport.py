"""The runner's transport over QGIS's network stack (proxy settings, SSL exceptions, logging).

`QgisTransport` implements scoring.runner.transport.SyncTransport with QgsBlockingNetworkRequest;
the runner wraps it with ThreadedTransport. A request is aborted when its timeout expires or when
the owning task is cancelled."""

from __future__ import annotations

import threading
from typing import Any

from qgis.core import QgsBlockingNetworkRequest, QgsFeedback
from qgis.PyQt.QtCore import QByteArray, QUrl
from qgis.PyQt.QtNetwork import QNetworkRequest

from scoring.runner.transport import DEFAULT_MAX_BYTES, Response, TransportError, encode_body

try:
    _CONTENT_TYPE = QNetworkRequest.KnownHeaders.ContentTypeHeader
    _STATUS = QNetworkRequest.Attribute.HttpStatusCodeAttribute
except AttributeError:  # older PyQt5 without scoped access
    _CONTENT_TYPE = QNetworkRequest.ContentTypeHeader
    _STATUS = QNetworkRequest.HttpStatusCodeAttribute


class RunCancelledError(Exception):
    """The user cancelled the run (not a network failure: nothing is recorded for it)."""


class QgisTransport:
    def __init__(self, is_cancelled=None):
        self._is_cancelled = is_cancelled or (lambda: False)
        self._lock = threading.Lock()
        self._feedbacks: set[QgsFeedback] = set()
        self.completed = 0

    def cancel_all(self) -> None:
        with self._lock:
            for fb in list(self._feedbacks):
                fb.cancel()

    def _request(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        data: bytes | None,
        timeout: float,
        max_bytes: int,
    ) -> Response:
        if self._is_cancelled():
            raise RunCancelledError("cancelled")
        req = QNetworkRequest(QUrl(url))
        req.setHeader(_CONTENT_TYPE, "application/json")
        for k, v in headers.items():
            req.setRawHeader(k.encode("latin-1"), v.encode("latin-1"))
        feedback = QgsFeedback()
        timed_out = threading.Event()

        def expire():
            timed_out.set()
            feedback.cancel()

        timer = threading.Timer(timeout, expire)
        with self._lock:
            self._feedbacks.add(feedback)
        timer.start()
        try:
            blocking = QgsBlockingNetworkRequest()
            if method == "POST":
                err = blocking.post(req, QByteArray(data or b""), False, feedback)
            else:
                err = blocking.get(req, False, feedback)
            reply = blocking.reply()
        finally:
            timer.cancel()
            with self._lock:
                self._feedbacks.discard(feedback)
        if self._is_cancelled():
            raise RunCancelledError("cancelled")
        if timed_out.is_set():
            raise TransportError("timeout", f"timed out after {timeout:g} s")
        status = reply.attribute(_STATUS)
        body = bytes(reply.content())
        if status is None or status == 0:
            msg = blocking.errorMessage() or "no response"
            kind = "connect" if err != QgsBlockingNetworkRequest.NoError and not body else "reset"
            raise TransportError(kind, f"cannot connect: {msg}" if kind == "connect" else msg)
        if len(body) > max_bytes:
            raise TransportError(
                "too_large", f"response larger than {max_bytes} bytes", body[:max_bytes], int(status)
            )
        hdrs = {
            bytes(h).decode("latin-1").lower(): bytes(reply.rawHeader(h)).decode("latin-1")
            for h in reply.rawHeaderList()
        }
        self.completed += 1
        return Response(int(status), hdrs, body)

    def post_json(
        self, url: str, headers: dict[str, str], body: Any, timeout: float, max_bytes: int = DEFAULT_MAX_BYTES
    ) -> Response:
        return self._request("POST", url, headers, encode_body(body), timeout, max_bytes)

    def get(
        self, url: str, headers: dict[str, str], timeout: float, max_bytes: int = DEFAULT_MAX_BYTES
    ) -> Response:
        return self._request("GET", url, headers, None, timeout, max_bytes)
