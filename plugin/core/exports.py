"""Exports from the dock: an instance's benchmark map (the headless renderer's bytes), the canvas
as a square PNG, and scoring chosen runs into an HTML report in a background task."""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import TYPE_CHECKING

from qgis.core import QgsMessageLog, QgsTask
from qgis.PyQt.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QPushButton,
    QWidget,
)

from scoring.errors import SpatialGapError
from scoring.formats.records import Instance
from scoring.formats.rundir import PREDICTIONS

from ..core.canvas_export import export_canvas_layout
from ..core.tasks import LOG_TAG
from ..gui.run_choice import ChooseRunsDialog, run_info
from ..utils.compat import MSG_CRITICAL, MSG_SUCCESS, MSG_WARNING
from ..utils.i18n import tr

if TYPE_CHECKING:  # matplotlib comes with scoring.render: imported when a map is exported
    from scoring.render import ContextIndex

CANVAS_SIDE_PX = 1536  # the benchmark maps' size, so canvas and map exports compare


class BenchmarkMaps:
    """Renders instance maps with scoring.render, its context index read once per benchmark."""

    def __init__(self, context_path: Path):
        self.context_path = context_path
        self._index: ContextIndex | None = None

    def render(self, inst: Instance, out_dir) -> Path:
        # matplotlib loads with scoring.render: only when a map is exported.
        from scoring.render import ContextIndex, render_instance

        if self._index is None:
            self._index = ContextIndex.from_file(self.context_path, int(inst["crs"]["epsg"]))
        return render_instance(inst, self._index, out_dir)["png"]


def export_canvas(
    canvas,
    path,
    size: int = CANVAS_SIDE_PX,
    title: str = "",
    legend_layers=None,
    key_lines=(),
    avoid_layers=(),
) -> Path:
    """The canvas's visible extent, squared around its centre, at size x size through a layout
    with legend, key panel, scale bar and attribution; always a .png."""
    return export_canvas_layout(canvas, path, size, title, legend_layers, key_lines, avoid_layers)


def run_dirs(runs_root: Path) -> list[Path]:
    """Run directories under runs_root that hold predictions."""
    if not runs_root.is_dir():
        return []
    return sorted(p for p in runs_root.iterdir() if (p / PREDICTIONS).is_file())


class ScoreTask(QgsTask):
    """Score runs and write the HTML report in the background; on_done(task, ok) on the main
    thread."""

    def __init__(self, bench_dir, runs, out_dir, on_done=None, only_recorded: bool = True):
        super().__init__(tr("Spatial Gap: scoring {n} run(s)").format(n=len(runs)), QgsTask.Flag.CanCancel)
        self.bench_dir = Path(bench_dir)
        self.runs = [Path(run) for run in runs]
        self.out_dir = Path(out_dir)
        self.on_done = on_done
        self.only_recorded = only_recorded  # unsent samples are not errors unless asked
        self.error: str | None = None
        self.report: Path | None = None
        self.summary = None

    def run(self) -> bool:
        # Everything, the import included, inside the try: an exception escaping run() aborts QGIS.
        try:
            # The report writer loads matplotlib and scipy: imported in the worker, when needed.
            from scoring.score import score_runs, write_report

            self.summary = score_runs(
                self.bench_dir, self.runs, self.out_dir, only_recorded=self.only_recorded
            )
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
        self.buttons = {}
        for name, label, slot in (
            ("map", tr("Export benchmark map…"), self.export_map),
            ("canvas", tr("Export canvas…"), self.export_canvas),
            ("score", tr("Score runs…"), self.score),
        ):
            button = QPushButton(label)
            button.clicked.connect(slot)
            row.addWidget(button)
            self.buttons[name] = button
        self.update_buttons(False, False)

    def update_buttons(self, instance_shown: bool, bench_open: bool) -> None:
        self.buttons["map"].setEnabled(instance_shown)
        self.buttons["canvas"].setEnabled(instance_shown)
        self.buttons["score"].setEnabled(bench_open)
        hint = "" if bench_open else tr("Open a benchmark first")
        for button in self.buttons.values():
            button.setToolTip("" if button.isEnabled() else hint or tr("Choose an instance first"))

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
        infos = [run_info(run, self.host.instances) for run in runs]
        dialog = ChooseRunsDialog(self, infos)
        if dialog.exec() and dialog.chosen():
            chosen = set(dialog.chosen())
            self.host.score_runs(
                sorted(chosen),
                count_unsent=dialog.count_unsent,
                coverage=[i for i in infos if i.path in chosen],
            )
