"""Exports from the dock: an instance's benchmark map (the headless renderer's bytes), the canvas
as a square PNG, and scoring chosen runs into an HTML report in a background task."""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import TYPE_CHECKING

from qgis.core import QgsMapRendererSequentialJob, QgsMessageLog, QgsRectangle, QgsTask
from qgis.PyQt.QtCore import QSize, Qt
from qgis.PyQt.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from scoring.errors import SpatialGapError
from scoring.rundir import PREDICTIONS

from .compat import MSG_CRITICAL, MSG_SUCCESS, MSG_WARNING
from .i18n import tr
from .tasks import LOG_TAG

if TYPE_CHECKING:  # matplotlib comes with scoring.render: imported when a map is exported
    from scoring.render import ContextIndex

CANVAS_SIDE_PX = 1536  # the benchmark maps' size, so canvas and map exports compare
PATH_ROLE = Qt.ItemDataRole.UserRole


class BenchmarkMaps:
    """Renders instance maps with scoring.render, its context index read once per benchmark."""

    def __init__(self, context_path: Path):
        self.context_path = context_path
        self._index: ContextIndex | None = None

    def render(self, inst: dict, out_dir) -> Path:
        # matplotlib loads with scoring.render: only when a map is exported.
        from scoring.render import ContextIndex, render_instance

        if self._index is None:
            self._index = ContextIndex.from_file(self.context_path, int(inst["crs"]["epsg"]))
        return render_instance(inst, self._index, out_dir)["png"]


def export_canvas(canvas, path, size: int = CANVAS_SIDE_PX) -> Path:
    """The canvas's visible extent, squared around its centre, rendered at size x size."""
    settings = canvas.mapSettings()
    extent = QgsRectangle(settings.visibleExtent())
    half = max(extent.width(), extent.height()) / 2
    centre = extent.center()
    settings.setExtent(
        QgsRectangle(centre.x() - half, centre.y() - half, centre.x() + half, centre.y() + half)
    )
    settings.setOutputSize(QSize(size, size))
    job = QgsMapRendererSequentialJob(settings)
    job.start()
    job.waitForFinished()
    if not job.renderedImage().save(str(path), "PNG"):
        raise SpatialGapError(tr("cannot write {path}").format(path=path))
    return Path(path)


def run_dirs(runs_root: Path) -> list[Path]:
    """Run directories under runs_root that hold predictions."""
    if not runs_root.is_dir():
        return []
    return sorted(p for p in runs_root.iterdir() if (p / PREDICTIONS).is_file())


def choose_runs(parent, runs: list[Path]) -> list[Path]:
    """Ask which runs to score together (all checked at first); [] when cancelled."""
    dialog = QDialog(parent)
    dialog.setWindowTitle(tr("Score runs"))
    layout = QVBoxLayout(dialog)
    run_list = QListWidget()
    for run in runs:
        item = QListWidgetItem(run.name)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
        item.setCheckState(Qt.CheckState.Checked)
        item.setData(PATH_ROLE, str(run))
        run_list.addItem(item)
    layout.addWidget(QLabel(tr("Runs to score together:")))
    layout.addWidget(run_list)
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
    buttons.accepted.connect(dialog.accept)
    buttons.rejected.connect(dialog.reject)
    layout.addWidget(buttons)
    if not dialog.exec():
        return []
    items = (run_list.item(i) for i in range(run_list.count()))
    return [Path(item.data(PATH_ROLE)) for item in items if item.checkState() == Qt.CheckState.Checked]


class ScoreTask(QgsTask):
    """Score runs and write the HTML report in the background; on_done(task, ok) on the main
    thread."""

    def __init__(self, bench_dir, runs, out_dir, on_done=None):
        super().__init__(tr("Spatial Gap: scoring {n} run(s)").format(n=len(runs)), QgsTask.CanCancel)
        self.bench_dir = Path(bench_dir)
        self.runs = [Path(run) for run in runs]
        self.out_dir = Path(out_dir)
        self.on_done = on_done
        self.error: str | None = None
        self.report: Path | None = None
        self.summary = None

    def run(self) -> bool:
        # Everything, the import included, inside the try: an exception escaping run() aborts QGIS.
        try:
            # The report writer loads matplotlib and scipy: imported in the worker, when needed.
            from scoring.score import score_runs, write_report

            self.summary = score_runs(self.bench_dir, self.runs, self.out_dir)
            self.report = write_report([self.out_dir], self.out_dir / "report.html")
            return True
        except SpatialGapError as exc:
            self.error = str(exc)
        except Exception as exc:  # noqa: BLE001 - must not escape run()
            self.error = f"{type(exc).__name__}: {exc}"
            QgsMessageLog.logMessage(traceback.format_exc(), LOG_TAG, MSG_WARNING)
        return False

    def finished(self, result: bool) -> None:
        if self.on_done is not None:
            try:
                self.on_done(self, result)
            except Exception:  # noqa: BLE001 - a GUI callback must not take QGIS down
                QgsMessageLog.logMessage(traceback.format_exc(), LOG_TAG, MSG_WARNING)


class ExportPanel(QWidget):
    """The dock's export buttons and their dialogs; the work is the dock's (`host`):
    export_benchmark_map, export_canvas, score_runs, message, runs_root."""

    def __init__(self, host):
        super().__init__(host)
        self.host = host
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        for label, slot in (
            (tr("Export benchmark map…"), self.export_map),
            (tr("Export canvas…"), self.export_canvas),
            (tr("Score runs…"), self.score),
        ):
            button = QPushButton(label)
            button.clicked.connect(slot)
            row.addWidget(button)

    def export_map(self) -> None:
        if self.host.current is None:
            return
        folder = QFileDialog.getExistingDirectory(self, tr("Folder for the benchmark map"))
        if folder:
            try:
                path = self.host.export_benchmark_map(folder)
                self.host.message(tr("Map written to {path}").format(path=path), MSG_SUCCESS)
            except SpatialGapError as exc:
                self.host.message(str(exc), MSG_CRITICAL)

    def export_canvas(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, tr("Save the canvas (1536 × 1536 PNG)"), "", "PNG (*.png)"
        )
        if path:
            try:
                written = self.host.export_canvas(path)
                self.host.message(tr("Canvas written to {path}").format(path=written), MSG_SUCCESS)
            except SpatialGapError as exc:
                self.host.message(str(exc), MSG_CRITICAL)

    def score(self) -> None:
        root = self.host.runs_root
        runs = run_dirs(root) if root is not None else []
        if not runs:
            self.host.message(tr("No runs yet under {path}").format(path=root or "-"), MSG_WARNING)
            return
        chosen = choose_runs(self, runs)
        if chosen:
            self.host.score_runs(chosen)
