"""The plugin object: a dock, an endpoints dialog, a Processing provider, translations."""

from __future__ import annotations

from qgis.core import QgsApplication
from qgis.PyQt.QtCore import QCoreApplication
from qgis.PyQt.QtWidgets import QAction

from .algorithms.provider import SpatialGapProvider
from .core import memory
from .gui.dock import SpatialGapDock
from .gui.settings_dialog import EndpointsDialog
from .utils.i18n import install_translator, tr
from .utils.icons import icon


class SpatialGapPlugin:
    def __init__(self, iface):
        self.iface = iface
        self.translator = install_translator()
        self.dock = None
        self.actions = []
        self.provider = None

    def initGui(self):  # noqa: N802 - QGIS API
        self.provider = SpatialGapProvider()
        QgsApplication.processingRegistry().addProvider(self.provider)
        dock_action = QAction(icon(), tr("Spatial Gap"), self.iface.mainWindow())
        dock_action.setCheckable(True)
        dock_action.triggered.connect(self.toggle_dock)
        settings_action = QAction(tr("Model endpoints…"), self.iface.mainWindow())
        settings_action.triggered.connect(self.open_settings)
        for action in (dock_action, settings_action):
            self.iface.addPluginToMenu(tr("&Spatial Gap"), action)
        self.iface.addToolBarIcon(dock_action)
        self.actions = [dock_action, settings_action]
        if memory.dock_was_open():  # the dock reopens as QGIS closed with it
            self.toggle_dock(True)

    def ensure_dock(self):
        if self.dock is None:
            self.dock = SpatialGapDock(self.iface, self, self.iface.mainWindow())
            # Where it was last time, with the benchmark, filters and choices it had.
            self.iface.addDockWidget(memory.dock_area(), self.dock)
            memory.restore_floating(self.dock)
            self.dock.memory.restore()
            if self.actions:
                self.dock.visibilityChanged.connect(self.actions[0].setChecked)
        return self.dock

    def toggle_dock(self, checked=True):
        dock = self.ensure_dock()
        dock.setVisible(bool(checked))

    def open_settings(self):
        EndpointsDialog(self.iface.mainWindow()).exec()
        if self.dock is not None:
            self.dock.reload_endpoints()

    def unload(self):
        if self.dock is not None:
            self.dock.memory.restoring = True  # unloading hides the dock: not the user's close
            self.dock.cancel_tasks()
            self.iface.removeDockWidget(self.dock)
            self.dock.deleteLater()
            self.dock = None
        for action in self.actions:
            self.iface.removePluginMenu(tr("&Spatial Gap"), action)
            self.iface.removeToolBarIcon(action)
            action.deleteLater()
        self.actions = []
        if self.provider is not None:
            QgsApplication.processingRegistry().removeProvider(self.provider)
            self.provider = None
        if self.translator is not None:
            QCoreApplication.removeTranslator(self.translator)
            self.translator = None
