"""The endpoint dialog's connection test runs in a QGIS task (QGIS stays responsive while the
server takes its time), shows the server's words as short plain text, and nothing raised by the
check leaves the task."""

from __future__ import annotations

from qgis.core import QgsApplication
from qgis.PyQt.QtCore import Qt

from plugin.core.connection_task import ConnectionTask
from plugin.core.endpoints import Endpoint, save_endpoints
from tests.plugin.conftest import wait_for
from tests.plugin.slowhttp import Reply, slow_server

PROXY_502 = (
    "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1>"
    "</center><hr><center>nginx/1.18.0</center>" + "<p>padding</p>" * 200 + "</body></html>"
)


def _dialog(base_url: str):
    from plugin.gui.settings_dialog import EndpointsDialog

    save_endpoints([Endpoint(name="slow", base_url=base_url, model="m", timeout_s=20.0)])
    return EndpointsDialog()


def test_the_connection_test_leaves_qgis_responsive_and_shows_plain_text(qgis_app, qgis_new_project):
    with slow_server(Reply(502, hold=True, html=PROXY_502)) as server:
        dialog = _dialog(server.base_url)
        dialog._test()
        # Back on the event loop at once: the request is held by the server, the dialog waits.
        assert server.wait_requests(1, 20)
        assert not dialog.test_btn.isEnabled() and dialog.result.text().startswith("Testing")
        server.released.set()
        wait_for(dialog.test_btn.isEnabled, 30)
    text = dialog.result.text()
    assert dialog.result.textFormat() == Qt.TextFormat.PlainText
    assert text.startswith("✘ HTTP 502") and "502 Bad Gateway" in text, text
    assert "<" not in text and len(text) <= 305
    save_endpoints([])


def test_an_exception_in_the_check_never_leaves_the_task(qgis_app):
    got: list[tuple[bool, str]] = []

    def hostile() -> tuple[bool, str]:
        raise RecursionError("maximum recursion depth exceeded")

    task = ConnectionTask("hostile", hostile, lambda ok, msg: got.append((ok, msg)))
    QgsApplication.taskManager().addTask(task)
    wait_for(lambda: bool(got), 30)
    assert got == [(False, "The connection test failed: RecursionError")]


def test_server_html_reads_as_its_text_once_and_short():
    from plugin.utils.text import plain

    assert plain(PROXY_502, 60) == "502 Bad Gateway nginx/1.18.0 padding"
    assert plain("HTTP 502: <html><title>502 Bad Gateway</title></html>") == "HTTP 502: 502 Bad Gateway"
    assert plain("x < 3 and y > 2 &amp; more") == "x < 3 and y > 2 & more"
    assert len(plain("word " * 200)) <= 300
