"""Stand-in plugin when the scoring package's dependencies are absent: says what is missing and
how to install it, without importing anything that would fail."""

from __future__ import annotations

from qgis.PyQt.QtWidgets import QAction, QPushButton

from ..install.deps import install_hint
from ..install.installer import InstallDialog
from ..utils.compat import MSG_INFO, MSG_WARNING
from ..utils.i18n import install_translator, tr


class MissingDependenciesPlugin:
    def __init__(self, iface, missing):
        self.iface = iface
        self.missing = missing
        self.action = None
        self.translator = install_translator()
        self.dialog: InstallDialog | None = None

    def message(self) -> str:
        names = ", ".join(pip for _, pip, _ in self.missing)
        return (
            tr("Spatial Gap needs Python packages that QGIS's Python lacks: {names}.").format(names=names)
            + "\n\n"
            + tr("Install them, then restart QGIS:")
            + "\n"
            + install_hint(self.missing)
        )

    def initGui(self):  # noqa: N802 - QGIS API
        self.action = QAction(tr("Install dependencies…"), self.iface.mainWindow())
        self.action.triggered.connect(self.show)
        self.iface.addPluginToMenu(tr("&Spatial Gap"), self.action)
        bar = self.iface.messageBar()
        if bar is not None:
            names = ", ".join(pip for _, pip, _ in self.missing)
            item = bar.createMessage(
                tr("Spatial Gap"),
                tr("needs Python packages that QGIS's Python lacks: {names}.").format(names=names),
            )
            button = QPushButton(tr("Install dependencies…"))
            button.clicked.connect(self.show)
            item.layout().addWidget(button)
            bar.pushWidget(item, MSG_WARNING, 0)
            self.bar_item = item

    def show(self):
        self.dialog = InstallDialog(self.missing, self.iface.mainWindow())
        self.dialog.exec()
        bar, item = self.iface.messageBar(), getattr(self, "bar_item", None)
        if self.dialog.succeeded and bar is not None and item is not None:
            # Installed: the "needs packages" bar has said its piece; the restart is what is left.
            bar.popWidget(item)
            self.bar_item = None
            bar.pushMessage(
                tr("Spatial Gap"), tr("Installed. Restart QGIS to load Spatial Gap."), MSG_INFO, 0
            )

    def unload(self):
        if self.action is not None:
            self.iface.removePluginMenu(tr("&Spatial Gap"), self.action)
            self.action.deleteLater()
            self.action = None
