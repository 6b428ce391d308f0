"""Model endpoints: the runner's config, with API keys kept in the QGIS auth database only."""

from __future__ import annotations

import json

from qgis.core import QgsApplication
from qgis.PyQt.QtCore import Qt
from qgis.PyQt.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
)

from scoring.errors import SpatialGapError
from scoring.runner.client import request_headers, server_message
from scoring.runner.config import Redactor
from scoring.runner.endpoints import endpoint_kinds
from scoring.runner.transport import TransportError

from ..core.auth import read_key, remove_key, store_key
from ..core.connection_task import ConnectionTask
from ..core.endpoints import Endpoint, load_endpoints, save_endpoints
from ..core.transport import QgisTransport
from ..gui.help import add_help, readme_url
from ..utils.i18n import tr
from ..utils.text import plain


def test_connection(ep: Endpoint, key: str | None, timeout: float = 15.0) -> tuple[bool, str]:
    """(ok, readable message): lists the endpoint's models and checks ours is among them."""
    try:
        spec = ep.spec()
    except SpatialGapError as exc:
        return False, str(exc)
    kind = endpoint_kinds()[spec.kind]
    url = spec.base_url.rstrip("/") + kind.models_path
    headers = request_headers(spec, key)
    redact = Redactor([key]).text
    try:
        resp = QgisTransport().get(url, headers, timeout)
    except TransportError as exc:
        return False, redact(tr("Cannot reach {url}: {error}").format(url=url, error=exc.message))
    if resp.status >= 400:
        return False, redact(
            tr("HTTP {status} from {url}: {message}").format(
                status=resp.status, url=url, message=server_message(resp.body)
            )
        )
    try:
        names = kind.model_names(json.loads(resp.body.decode("utf-8")))
    except (ValueError, UnicodeDecodeError, RecursionError):  # a list nested too deeply to read
        names = []
    if not names:
        return True, tr("Connected (HTTP {status}), but the model list is not readable").format(
            status=resp.status
        )
    if spec.model in names:
        return True, tr("Connected: model {model} is available").format(model=spec.model)
    return True, tr("Connected, but {model} is not among the endpoint's models: {names}").format(
        model=spec.model, names=", ".join(map(str, names[:10])) or "-"
    )


class EndpointsDialog(QDialog):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWindowTitle(tr("Spatial Gap model endpoints"))
        self.endpoints = load_endpoints()
        lay = QHBoxLayout(self)
        left = QVBoxLayout()
        self.list = QListWidget()
        self.list.currentRowChanged.connect(self._show)
        add, rem = QPushButton(tr("Add")), QPushButton(tr("Remove"))
        add.clicked.connect(self._add)
        rem.clicked.connect(self._remove)
        left.addWidget(self.list)
        row = QHBoxLayout()
        row.addWidget(add)
        row.addWidget(rem)
        left.addLayout(row)
        lay.addLayout(left)
        right = QVBoxLayout()
        form = QFormLayout()
        self.name = QLineEdit()
        self.kind = QComboBox()
        self.kind.addItems(list(endpoint_kinds()))
        self.base_url = QLineEdit()
        self.base_url.setMinimumWidth(380)  # a full URL, not its first half
        self.model = QLineEdit()
        self.key = QLineEdit()
        self.key.setEchoMode(QLineEdit.EchoMode.Password)
        self.key.setPlaceholderText(tr("stored in the QGIS authentication database"))
        self.timeout = QDoubleSpinBox()
        self.timeout.setRange(1, 3600)
        self.timeout.setSuffix(" s")
        self.concurrency = QSpinBox()
        self.concurrency.setRange(1, 256)
        # Prices per million tokens, for the cost asked about before a set is sent; 0: not set.
        self.prices = []
        for _ in range(2):
            price = QDoubleSpinBox()
            price.setRange(0, 10000)
            price.setDecimals(3)
            price.setSpecialValueText(tr("not set"))
            self.prices.append(price)
        self.auth_label = QLabel()
        for label, w in (
            (tr("Name"), self.name),
            (tr("Kind"), self.kind),
            (tr("Base URL"), self.base_url),
            (tr("Model"), self.model),
            (tr("API key"), self.key),
            (tr("Auth config"), self.auth_label),
            (tr("Timeout"), self.timeout),
            (tr("Concurrency"), self.concurrency),
            (tr("Price in (per million tokens)"), self.prices[0]),
            (tr("Price out (per million tokens)"), self.prices[1]),
        ):
            form.addRow(label, w)
        right.addLayout(form)
        self.test_btn = QPushButton(tr("Test connection"))
        self.test_btn.clicked.connect(self._test)
        self.result = QLabel()
        self.result.setWordWrap(True)
        self.result.setTextFormat(Qt.TextFormat.PlainText)
        right.addWidget(self.test_btn)
        right.addWidget(self.result)
        bb = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Close)
        bb.accepted.connect(self.save)
        bb.rejected.connect(self.reject)
        add_help(bb, lambda: readme_url("running-models"))
        right.addWidget(bb)
        lay.addLayout(right)
        self._row = -1
        for e in self.endpoints:
            self.list.addItem(e.name)
        if self.endpoints:
            self.list.setCurrentRow(0)

    def _show(self, row: int):
        self._commit()
        self._row = row
        if 0 <= row < len(self.endpoints):
            e = self.endpoints[row]
            self.name.setText(e.name)
            self.kind.setCurrentText(e.kind)
            self.base_url.setText(e.base_url)
            self.model.setText(e.model)
            self.key.clear()
            self.auth_label.setText(e.authcfg or tr("(no key)"))
            self.timeout.setValue(e.timeout_s)
            self.concurrency.setValue(e.concurrency)
            self.prices[0].setValue(e.price_in or 0.0)
            self.prices[1].setValue(e.price_out or 0.0)
            self.result.clear()

    def _commit(self) -> Endpoint | None:
        """Copy the form into the selected endpoint; a typed key goes to the auth database."""
        if not 0 <= self._row < len(self.endpoints):
            return None
        e = self.endpoints[self._row]
        e.name = self.name.text().strip() or e.name
        e.kind = self.kind.currentText()
        e.base_url = self.base_url.text().strip()
        e.model = self.model.text().strip()
        e.timeout_s = self.timeout.value()
        e.concurrency = self.concurrency.value()
        e.price_in, e.price_out = (p.value() or None for p in self.prices)
        if self.key.text():
            try:
                e.authcfg = store_key(e.name, self.key.text(), e.authcfg or None)
            except SpatialGapError as exc:
                QMessageBox.warning(self, tr("Spatial Gap"), str(exc))
            self.key.clear()
            self.auth_label.setText(e.authcfg)
        item = self.list.item(self._row)
        if item is not None:
            item.setText(e.name)
        return e

    def _add(self):
        self._commit()
        names = {e.name for e in self.endpoints}
        n = 1
        while f"model{n}" in names:
            n += 1
        self.endpoints.append(Endpoint(name=f"model{n}"))
        self.list.addItem(f"model{n}")
        self.list.setCurrentRow(len(self.endpoints) - 1)

    def _remove(self):
        row = self.list.currentRow()
        if 0 <= row < len(self.endpoints):
            e = self.endpoints.pop(row)
            if e.authcfg:
                remove_key(e.authcfg)
            self._row = -1
            self.list.takeItem(row)

    def _test(self):
        e = self._commit()
        if e is None:
            return
        try:
            key = read_key(e.authcfg)
        except SpatialGapError as exc:
            self.result.setText(str(exc))
            return
        # In a task: the request may wait its whole timeout, QGIS must not freeze meanwhile.
        timeout = min(30.0, e.timeout_s)
        self.test_btn.setEnabled(False)
        self.result.setText(tr("Testing {url}…").format(url=plain(e.base_url, 120)))
        self.connection_task = ConnectionTask(e.name, lambda: test_connection(e, key, timeout), self._tested)
        QgsApplication.taskManager().addTask(self.connection_task)

    def _tested(self, ok: bool, message: str) -> None:
        self.test_btn.setEnabled(True)
        # A server's words as plain text, shortened (a proxy's 502 page is HTML).
        self.result.setText(("✔ " if ok else "✘ ") + plain(message))

    def save(self):
        self._commit()
        save_endpoints(self.endpoints)
        self.accept()
