"""Install what QGIS's Python lacks into a plugin-private directory, with QGIS's own Python and
pip, after the user agreed (no scoring import: this runs when scoring cannot be imported).

`--target` into a private directory works where the system pip refuses `--user` installs (PEP 668
"externally managed" Debian 12 / Ubuntu 24.04) and never touches the system site-packages.
numpy and pyproj are never installed: GDAL's bindings share QGIS's numpy, and a pyproj wheel
bundles its own PROJ, which crashes QGIS."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from qgis.core import Qgis, QgsApplication
from qgis.PyQt.QtCore import QProcess, Qt
from qgis.PyQt.QtGui import QTextCursor
from qgis.PyQt.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from ..gui.help import add_help
from ..install.deps import install_hint
from ..utils.i18n import tr

NEVER_PIP = {"pyproj", "numpy"}  # from the distribution (or the QGIS installer) only
DIR_NAME = "spatialgap-libs"


def private_dir(settings_dir: str | None = None) -> Path:
    """The plugin's own library directory inside the QGIS profile, one per Python version."""
    base = Path(settings_dir or QgsApplication.qgisSettingsDirPath())
    return base / "python" / DIR_NAME / f"py{sys.version_info.major}{sys.version_info.minor}"


def expose_private_dir(settings_dir: str | None = None) -> Path | None:
    """Make the private directory importable (before scoring is imported), if it exists: at the
    end of sys.path, so it never shadows what QGIS or other plugins ship (see install.paths)."""
    from .paths import expose_private

    target = private_dir(settings_dir)
    if not target.is_dir():
        return None
    expose_private(target)
    return target


def qgis_python() -> str | None:
    """The interpreter QGIS runs on (sys.executable is the qgis binary itself inside QGIS)."""
    exe = Path(sys.executable)
    candidates = [exe] if exe.name.lower().startswith("python") else []
    major, minor = sys.version_info.major, sys.version_info.minor
    for root in (Path(sys.exec_prefix), Path(sys.base_exec_prefix)):
        candidates += [root / "python.exe", root / "bin" / f"python{major}.{minor}", root / "bin" / "python3"]
    found = shutil.which(f"python{major}.{minor}")
    candidates += [Path(found)] if found else []
    return next((str(c) for c in candidates if c.is_file() and os.access(c, os.X_OK)), None)


# The pure-Python packages a wheel needs at run time (pip runs with --no-deps, so that numpy
# is never pulled in); (import name, pip name), installed only when not importable.
RUNTIME_DEPS = {
    "jinja2": (("markupsafe", "markupsafe"),),
}


def shapely_requirement(geos: tuple[int, int] | None = None) -> str:
    """The shapely wheels that work inside this QGIS: QGIS has already loaded its own GEOS, whose
    symbols take precedence over the wheel's bundled copy, so shapely must be built for a GEOS
    no newer than QGIS's (shapely 2.1 asks GEOS >= 3.12 for 4-dimensional WKT, which 3.11 refuses)."""
    major, minor = geos or (Qgis.geosVersionMajor(), Qgis.geosVersionMinor())
    return "shapely>=2.0,<2.1" if (major, minor) < (3, 12) else "shapely>=2.0"


def installable(missing, geos: tuple[int, int] | None = None) -> tuple[list[str], list[str]]:
    """(pip requirements this dialog installs, modules left to the distribution)."""
    pip_reqs = []
    for mod, pip, _ in missing:
        if mod in NEVER_PIP:
            continue
        pip_reqs.append(shapely_requirement(geos) if mod == "shapely" else pip)
        pip_reqs += [name for dep, name in RUNTIME_DEPS.get(mod, ()) if importlib.util.find_spec(dep) is None]
    left = [mod for mod, _, _ in missing if mod in NEVER_PIP]
    return list(dict.fromkeys(pip_reqs)), left


def pip_arguments(target: Path, requirements: list[str], extra: tuple[str, ...] = ()) -> list[str]:
    """`python -m pip` arguments: wheels only, no dependencies pulled in (numpy stays QGIS's)."""
    return [
        "-m",
        "pip",
        "install",
        "--target",
        str(target),
        "--upgrade",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "--no-input",
        *extra,
        *requirements,
    ]


def installed_version(module: str, pip_req: str) -> str:
    name = pip_req.split(">")[0].split("=")[0].strip()
    try:
        return version(name)
    except PackageNotFoundError:
        return ""


class InstallDialog(QDialog):
    """Lists the missing packages, asks consent, runs pip, shows its output, says what next."""

    def __init__(self, missing, parent=None, pip_extra: tuple[str, ...] = ()):
        super().__init__(parent)
        self.setWindowTitle(tr("Spatial Gap: install dependencies"))
        self.missing, self.pip_extra = list(missing), tuple(pip_extra)
        self.requirements, self.left = installable(self.missing)
        self.target = private_dir()
        self.python = qgis_python()
        self.process: QProcess | None = None
        self.succeeded: bool | None = None
        layout = QVBoxLayout(self)
        intro = QLabel(
            tr(
                "Spatial Gap needs these Python packages, which QGIS's Python lacks or has too old. "
                "They can be installed for this plugin only, into:"
            )
            + f"\n{self.target}"
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.table = QTableWidget(len(self.missing), 3)
        self.table.setHorizontalHeaderLabels([tr("Package"), tr("Needed"), tr("Installed")])
        for row, (mod, pip_req, _deb) in enumerate(self.missing):
            have = installed_version(mod, pip_req) or tr("missing")
            for col, text in enumerate((mod, pip_req, have)):
                self.table.setItem(row, col, QTableWidgetItem(text))
        self.table.resizeColumnsToContents()
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.verticalHeader().setVisible(False)
        rows_height = sum(self.table.rowHeight(r) for r in range(self.table.rowCount()))
        self.table.setMaximumHeight(rows_height + self.table.horizontalHeader().height() + 6)
        layout.addWidget(self.table)
        notes = []
        if self.left:
            notes.append(
                tr(
                    "Not installed here (take them from your distribution or the QGIS installer): {names}"
                ).format(names=", ".join(self.left))
            )
        if self.python is None:
            notes.append(tr("QGIS's Python interpreter was not found; install by hand:"))
        notes.append(tr("Or by hand, outside QGIS:") + "\n" + install_hint(self.missing))
        self.notes = QLabel("\n".join(notes))
        self.notes.setWordWrap(True)
        self.notes.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.notes)
        self.output = QPlainTextEdit()
        self.output.setReadOnly(True)
        self.output.setVisible(False)
        layout.addWidget(self.output)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        layout.addWidget(self.status)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.install_btn = QPushButton(tr("Install"))
        self.install_btn.setEnabled(bool(self.requirements) and self.python is not None)
        self.buttons.addButton(self.install_btn, QDialogButtonBox.ButtonRole.ActionRole)
        self.install_btn.clicked.connect(self.install)
        self.buttons.rejected.connect(self.reject)
        add_help(self.buttons)  # the README's plugin section covers the installation
        layout.addWidget(self.buttons)
        self.resize(620, 420)

    def install(self) -> QProcess | None:
        """Start pip (clicking Install is the consent); the result arrives in _done."""
        if self.python is None or not self.requirements:
            return None
        self.target.mkdir(parents=True, exist_ok=True)
        self.install_btn.setEnabled(False)
        self.output.setVisible(True)
        self.status.setText(tr("Installing…"))
        proc = QProcess(self)
        proc.setProcessChannelMode(QProcess.ProcessChannelMode.MergedChannels)
        proc.readyReadStandardOutput.connect(
            lambda: self._append(bytes(proc.readAllStandardOutput()).decode(errors="replace"))
        )
        proc.finished.connect(self._done)
        args = pip_arguments(self.target, self.requirements, self.pip_extra)
        self.output.appendPlainText(" ".join([self.python, *args]))
        proc.start(self.python, args)
        self.process = proc
        return proc

    def _append(self, chunk: str) -> None:
        """pip's output as it comes, line breaks as pip wrote them (appendPlainText would add one
        after every chunk: double-spaced lines)."""
        self.output.moveCursor(QTextCursor.MoveOperation.End)
        self.output.insertPlainText(chunk)
        self.output.moveCursor(QTextCursor.MoveOperation.End)

    def _done(self, exit_code: int, _status=None) -> None:
        self.succeeded = exit_code == 0
        if not self.succeeded:
            self.status.setText(
                tr("pip failed (exit code {code}); its output is above.").format(code=exit_code)
            )
            self.install_btn.setEnabled(True)
            return
        expose_private_dir()
        self._show_installed()
        self.status.setText(tr("Installed. Restart QGIS to load Spatial Gap."))

    def _show_installed(self) -> None:
        """The Installed column after pip: each package's version in the private directory."""
        from importlib.metadata import distributions

        found = {
            (d.metadata["Name"] or "").lower().replace("_", "-"): d.version
            for d in distributions(path=[str(self.target)])
        }
        for row, (mod, _pip_req, _deb) in enumerate(self.missing):
            version_here = found.get(mod.lower().replace("_", "-"))
            if version_here:
                text = tr("{version} (after a restart)").format(version=version_here)
                self.table.setItem(row, 2, QTableWidgetItem(text))
