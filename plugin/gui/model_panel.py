"""The dock's model tab: which endpoint, modality and QA form a run uses, and the send buttons."""

from __future__ import annotations

from qgis.PyQt.QtWidgets import QComboBox, QFormLayout, QHBoxLayout, QProgressBar, QPushButton, QWidget

from scoring.vocab import MODALITIES, QA_FORMS, Modality

from ..core.endpoints import Endpoint, load_endpoints
from ..utils.i18n import tr


class ModelPanel(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.endpoints: dict[str, Endpoint] = {}
        form = QFormLayout(self)
        self.endpoint_combo = QComboBox()
        self.modality_combo = QComboBox()
        for modality in MODALITIES:
            self.modality_combo.addItem(str(modality), str(modality))
        self.form_combo = QComboBox()
        for qa_form in QA_FORMS:
            self.form_combo.addItem(str(qa_form), str(qa_form))
        form.addRow(tr("Endpoint"), self.endpoint_combo)
        form.addRow(tr("Modality"), self.modality_combo)
        form.addRow(tr("QA form"), self.form_combo)
        self.send_btn = QPushButton(tr("Send instance"))
        self.send_all_btn = QPushButton(tr("Send filtered set"))
        self.settings_btn = QPushButton(tr("Endpoints…"))
        buttons = QHBoxLayout()
        for button in (self.send_btn, self.send_all_btn, self.settings_btn):
            buttons.addWidget(button)
        form.addRow(buttons)
        # The dock's own view of its runs (QGIS's task bar is easy to miss).
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.cancel_btn = QPushButton(tr("Cancel run"))
        run_row = QHBoxLayout()
        run_row.addWidget(self.progress, 1)
        run_row.addWidget(self.cancel_btn)
        form.addRow(run_row)
        self.set_running(False)

    def set_running(self, running: bool, percent: float = 0.0) -> None:
        self.progress.setVisible(running)
        self.cancel_btn.setVisible(running)
        self.cancel_btn.setEnabled(running)
        self.progress.setValue(int(percent))

    def reload_endpoints(self) -> None:
        """The endpoints saved in the QGIS settings; the chosen one stays chosen if it still exists."""
        current = self.endpoint_combo.currentText()
        self.endpoint_combo.clear()
        self.endpoints = {endpoint.name: endpoint for endpoint in load_endpoints()}
        for name in self.endpoints:
            self.endpoint_combo.addItem(name)
        if current in self.endpoints:
            self.endpoint_combo.setCurrentText(current)

    def endpoint(self, name: str | None = None) -> Endpoint | None:
        return self.endpoints.get(name or self.endpoint_combo.currentText())

    @property
    def modality(self) -> Modality:
        return Modality(self.modality_combo.currentData())  # Qt hands the item's data back as a str

    @property
    def qa_form(self) -> str:
        return self.form_combo.currentData()
