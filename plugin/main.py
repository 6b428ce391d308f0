"""The plugin object: a dock, an endpoints dialog, a Processing provider, translations."""

from __future__ import annotations

from qgis.core import QgsApplication
from qgis.PyQt.QtCore import Qt
from qgis.PyQt.QtGui import QIcon
from qgis.PyQt.QtWidgets import QAction

from .i18n import PLUGIN_DIR, install_translator, tr


def icon() -> QIcon:
    for p in (
        PLUGIN_DIR / "resources" / "icons" / "spatialgap.svg",
        PLUGIN_DIR.parent / "resources" / "icons" / "spatialgap.svg",
    ):
        if p.is_file():
            return QIcon(str(p))
    return QIcon()


class SpatialGapPlugin:
    def __init__(self, iface):
        self.iface = iface
        self.translator = install_translator()
        self.dock = None
        self.actions = []
        self.provider = None

    def initGui(self):  # noqa: N802 - QGIS API
        from .processing_provider import SpatialGapProvider

        self.provider = SpatialGapProvider()
        QgsApplication.processingRegistry().addProvider(self.provider)
        a_dock = QAction(icon(), tr("Spatial Gap"), self.iface.mainWindow())
        a_dock.setCheckable(True)
        a_dock.triggered.connect(self.toggle_dock)
        a_settings = QAction(tr("Model endpoints…"), self.iface.mainWindow())
        a_settings.triggered.connect(self.open_settings)
        for a in (a_dock, a_settings):
            self.iface.addPluginToMenu(tr("&Spatial Gap"), a)
        self.iface.addToolBarIcon(a_dock)
        self.actions = [a_dock, a_settings]

    def ensure_dock(self):
        if self.dock is None:
            from .dock import SpatialGapDock

            self.dock = SpatialGapDock(self.iface, self, self.iface.mainWindow())
            self.iface.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.dock)
        return self.dock

    def toggle_dock(self, checked=True):
        dock = self.ensure_dock()
        dock.setVisible(bool(checked))

    def open_settings(self):
        from .settings_dialog import EndpointsDialog

        EndpointsDialog(self.iface.mainWindow()).exec()
        if self.dock is not None:
            self.dock.reload_endpoints()

    def unload(self):
        if self.dock is not None:
            self.dock.cancel_tasks()
            self.iface.removeDockWidget(self.dock)
            self.dock.deleteLater()
            self.dock = None
        for a in self.actions:
            self.iface.removePluginMenu(tr("&Spatial Gap"), a)
            self.iface.removeToolBarIcon(a)
            a.deleteLater()
        self.actions = []
        if self.provider is not None:
            QgsApplication.processingRegistry().removeProvider(self.provider)
            self.provider = None
        if self.translator is not None:
            from qgis.PyQt.QtCore import QCoreApplication

            QCoreApplication.removeTranslator(self.translator)
            self.translator = None
