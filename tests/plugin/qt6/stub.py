"""The stand-in `qgis` package the probe imports the plugin against: qgis.PyQt over PyQt6 as QGIS 4
maps it (QtWidgets also re-exporting the classes Qt 6 moved to QtGui), qgis.core a stub: settings
through QSettings, the log to stderr, any other name a placeholder class (the widgets under check
only name QGIS classes, they do not draw with them)."""

from __future__ import annotations

from pathlib import Path

CORE = """
import sys

from PyQt6.QtCore import QSettings
from PyQt6.QtGui import QIcon


class _Anything(type):
    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Anything(name, (), {})

    def __call__(cls, *args, **kwargs):
        return cls


class Qgis(metaclass=_Anything):
    QGIS_VERSION_INT = 40000


class QgsSettings(QSettings):
    pass


class QgsApplication:
    @staticmethod
    def getThemeIcon(name):
        return QIcon()


class QgsMessageLog:
    @staticmethod
    def logMessage(text, tag="", level=None):
        print(f"{tag}: {text}", file=sys.stderr)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _Anything(name, (), {})
"""

WIDGETS = """
from PyQt6.QtGui import QAction, QActionGroup, QShortcut
from PyQt6.QtWidgets import *
"""


def write_stub(root: Path) -> None:
    """The package under `root` (put root first on sys.path)."""
    pyqt = root / "qgis" / "PyQt"
    pyqt.mkdir(parents=True, exist_ok=True)
    (root / "qgis" / "__init__.py").write_text("")
    (pyqt / "__init__.py").write_text("")
    (root / "qgis" / "core.py").write_text(CORE)
    (pyqt / "QtWidgets.py").write_text(WIDGETS)
    for module in ("QtCore", "QtGui", "QtNetwork"):
        (pyqt / f"{module}.py").write_text(f"from PyQt6.{module} import *\n")
