"""The runner's transport over QGIS's network stack (proxy settings, SSL exceptions, logging).

`QgisTransport` implements scoring.runner.transport.SyncTransport; the runner wraps it with
ThreadedTransport. Each request runs in its own QThread with its own event loop, and that loop
itself polls the deadline and the cancel flag: a cross-thread signal into a thread that Qt did
not start (the runner's Python workers) may never be delivered and Qt timers do not run there,
which is how a timed-out or cancelled request used to hang its task for good."""

from __future__ import annotations

import threading
import time
from typing import Any

from qgis.core import QgsNetworkAccessManager
from qgis.PyQt.QtCore import QByteArray, QEventLoop, QThread, QTimer, QUrl
from qgis.PyQt.QtNetwork import QNetworkReply, QNetworkRequest

from scoring.runner.transport import DEFAULT_MAX_BYTES, Response, TransportError, encode_body

_CONTENT_TYPE = QNetworkRequest.KnownHeaders.ContentTypeHeader
_STATUS = QNetworkRequest.Attribute.HttpStatusCodeAttribute
_NET = QNetworkReply.NetworkError

POLL_MS = 25  # how often a request checks its deadline and the cancel flag
# Beyond the request's own deadline, how long the caller waits for its thread before giving up
# on it (the thread is then kept referenced: a QThread destroyed while running aborts QGIS).
JOIN_GRACE_S = 5.0
_CONNECT_ERRORS = ("ConnectionRefusedError", "HostNotFoundError", "NetworkSessionFailedError")
_ORPHANS: set[QThread] = set()


class RunCancelledError(Exception):
    """The user cancelled the run (not a network failure: nothing is recorded for it)."""


class _RequestThread(QThread):
    """One HTTP request through the thread's QgsNetworkAccessManager instance."""

    def __init__(self, method: str, url: str, headers: dict[str, str], data: bytes | None, timeout: float):
        super().__init__()
        self.method, self.url, self.headers, self.data, self.timeout = method, url, headers, data, timeout
        self.stop_reason: str | None = None  # "cancelled", "timeout", "too_large"
        self.max_bytes = DEFAULT_MAX_BYTES
        self.cancel_flag = threading.Event()
        self.done = threading.Event()
        self.status: int | None = None
        self.reply_headers: dict[str, str] = {}
        self.body = b""
        self.error_name = ""
        self.error_text = ""

    def run(self) -> None:
        try:
            self._fetch()
        except Exception as exc:  # noqa: BLE001 - an exception escaping QThread.run aborts QGIS
            self.error_name, self.error_text = "PythonError", f"{type(exc).__name__}: {exc}"
        finally:
            self.done.set()

    def _fetch(self) -> None:
        req = QNetworkRequest(QUrl(self.url))
        req.setHeader(_CONTENT_TYPE, "application/json")
        for k, v in self.headers.items():
            req.setRawHeader(k.encode("latin-1"), v.encode("latin-1"))
        nam = QgsNetworkAccessManager.instance()  # this thread's instance, with QGIS's settings
        if self.method == "POST":
            reply = nam.post(req, QByteArray(self.data or b""))
        else:
            reply = nam.get(req)
        # QGIS's own network timeout (60 s by default) must not cut a slow model short: the
        # endpoint's timeout, enforced below, is the one that applies.
        qgis_timer = reply.findChild(QTimer, "timeoutTimer")
        if qgis_timer is not None:
            qgis_timer.stop()
        deadline = time.monotonic() + self.timeout
        loop = QEventLoop()
        reply.finished.connect(loop.quit)

        def check() -> None:
            if self.cancel_flag.is_set():
                self.stop_reason = "cancelled"
            elif time.monotonic() >= deadline:
                self.stop_reason = "timeout"
            elif reply.bytesAvailable() > self.max_bytes:
                self.stop_reason = "too_large"
            if self.stop_reason is not None:
                reply.abort()
                loop.quit()

        poll = QTimer()
        poll.setInterval(POLL_MS)
        poll.timeout.connect(check)
        poll.start()
        if not reply.isFinished():
            loop.exec()
        poll.stop()
        status = reply.attribute(_STATUS)
        self.status = int(status) if status else None
        self.reply_headers = {
            bytes(h).decode("latin-1").lower(): bytes(reply.rawHeader(h)).decode("latin-1")
            for h in reply.rawHeaderList()
        }
        self.body = bytes(reply.readAll())[: self.max_bytes + 1]
        error = reply.error()
        if error != _NET.NoError:
            self.error_name = _error_name(error)
            self.error_text = reply.errorString()
        reply.deleteLater()


def _error_name(code: Any) -> str:
    for name in _CONNECT_ERRORS + ("TimeoutError", "OperationCanceledError"):
        if getattr(_NET, name, None) == code:
            return name
    return str(int(code))


class QgisTransport:
    def __init__(self, is_cancelled=None):
        self._is_cancelled = is_cancelled or (lambda: False)
        self._lock = threading.Lock()
        self._cancelled = threading.Event()
        self._threads: set[_RequestThread] = set()
        self.completed = 0

    def cancel_all(self) -> None:
        """Abort every request in flight and refuse new ones (safe from any thread)."""
        self._cancelled.set()
        with self._lock:
            for thread in self._threads:
                thread.cancel_flag.set()

    def _check_cancelled(self) -> None:
        if self._cancelled.is_set() or self._is_cancelled():
            raise RunCancelledError("cancelled")

    def _request(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        data: bytes | None,
        timeout: float,
        max_bytes: int,
    ) -> Response:
        self._check_cancelled()
        thread = _RequestThread(method, url, headers, data, timeout)
        thread.max_bytes = max_bytes
        with self._lock:
            self._threads.add(thread)
        thread.start()
        give_up = time.monotonic() + timeout + JOIN_GRACE_S
        try:
            # Short waits so that a cancel through is_cancelled() (the task's own flag) is seen.
            while not thread.done.wait(POLL_MS / 1000):
                if self._is_cancelled():
                    thread.cancel_flag.set()
                if thread.cancel_flag.is_set() or time.monotonic() > give_up:
                    thread.cancel_flag.set()
                    thread.done.wait(JOIN_GRACE_S)
                    break
        finally:
            with self._lock:
                self._threads.discard(thread)
        if not thread.done.is_set() or not thread.wait(int(JOIN_GRACE_S * 1000)):
            _ORPHANS.add(thread)  # never let a running QThread be destroyed (that aborts QGIS)
            thread.stop_reason = thread.stop_reason or "timeout"
        if thread.stop_reason == "cancelled" or self._cancelled.is_set() or self._is_cancelled():
            raise RunCancelledError("cancelled")
        return self._response(thread, timeout, max_bytes)

    def _response(self, thread: _RequestThread, timeout: float, max_bytes: int) -> Response:
        if thread.stop_reason == "timeout" or thread.error_name == "TimeoutError":
            raise TransportError("timeout", f"timed out after {timeout:g} s")
        body = thread.body
        if thread.stop_reason == "too_large" or len(body) > max_bytes:
            raise TransportError(
                "too_large", f"response larger than {max_bytes} bytes", body[:max_bytes], thread.status
            )
        if thread.status is None:
            msg = thread.error_text or "no response"
            if thread.error_name in _CONNECT_ERRORS:
                raise TransportError("connect", f"cannot connect: {msg}")
            raise TransportError("truncated" if body else "reset", msg, body)
        self.completed += 1
        return Response(thread.status, thread.reply_headers, body)

    def post_json(
        self, url: str, headers: dict[str, str], body: Any, timeout: float, max_bytes: int = DEFAULT_MAX_BYTES
    ) -> Response:
        return self._request("POST", url, headers, encode_body(body), timeout, max_bytes)

    def get(
        self, url: str, headers: dict[str, str], timeout: float, max_bytes: int = DEFAULT_MAX_BYTES
    ) -> Response:
        return self._request("GET", url, headers, None, timeout, max_bytes)
