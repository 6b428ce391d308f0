"""Which runs to score: each run's state and coverage (answered / total samples), failed runs left
unticked, and whether unsent samples count as errors (not unless asked)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from qgis.PyQt.QtCore import Qt
from qgis.PyQt.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
)

from scoring.errors import SpatialGapError
from scoring.formats.records import Instance
from scoring.formats.rundir import PREDICTIONS, final_predictions, read_run_manifest

from ..gui.help import add_help, readme_url
from ..utils.i18n import tr
from ..utils.text import state_name

PATH_ROLE = Qt.ItemDataRole.UserRole
FAILED_STATES = ("aborted", "stopped", "interrupted")


@dataclass(frozen=True)
class RunInfo:
    path: Path
    status: str
    answered: int  # samples with an ok final record
    total: int  # samples the run covers: its task's instances x its forms

    @property
    def failed(self) -> bool:
        return self.status in FAILED_STATES or self.answered == 0

    @property
    def coverage(self) -> str:
        return f"{self.answered}/{self.total}"


def run_info(run_dir: Path, instances: list[Instance]) -> RunInfo:
    try:
        manifest = read_run_manifest(run_dir) or {}
        finals = final_predictions(run_dir / PREDICTIONS)
    except (SpatialGapError, OSError, ValueError):
        return RunInfo(run_dir, "unreadable", 0, 0)
    task = manifest.get("task")
    forms = manifest.get("forms") or []
    n_instances = sum(1 for inst in instances if task is None or inst.get("task") == task)
    total = n_instances * max(1, len(forms)) if task is not None else len(finals)
    answered = sum(1 for rec in finals.values() if rec.get("status") == "ok")
    return RunInfo(run_dir, str(manifest.get("status") or "unknown"), answered, max(total, answered))


class ChooseRunsDialog(QDialog):
    """The runs with their state and coverage; failed ones unticked. `chosen()` and
    `count_unsent` after exec()."""

    def __init__(self, parent, infos: list[RunInfo]):
        super().__init__(parent)
        self.setWindowTitle(tr("Score runs"))
        layout = QVBoxLayout(self)
        self.run_list = QListWidget()
        for info in infos:
            state = state_name("failed" if info.failed else info.status)
            item = QListWidgetItem(
                tr("{name} — {state}, {coverage} answered").format(
                    name=info.path.name, state=state, coverage=info.coverage
                )
            )
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Unchecked if info.failed else Qt.CheckState.Checked)
            item.setData(PATH_ROLE, str(info.path))
            self.run_list.addItem(item)
        layout.addWidget(QLabel(tr("Runs to score together (failed runs are not ticked):")))
        layout.addWidget(self.run_list)
        self.unsent_box = QCheckBox(tr("Count samples a run never answered as errors"))
        self.unsent_box.setToolTip(
            tr("Off: each run is scored on what it answered, and its coverage is reported.")
        )
        layout.addWidget(self.unsent_box)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        add_help(buttons, lambda: readme_url("scoring-and-reports"))
        layout.addWidget(buttons)

    def chosen(self) -> list[Path]:
        items = (self.run_list.item(i) for i in range(self.run_list.count()))
        return [Path(item.data(PATH_ROLE)) for item in items if item.checkState() == Qt.CheckState.Checked]

    @property
    def count_unsent(self) -> bool:
        return self.unsent_box.isChecked()


def coverage_text(infos: list[RunInfo]) -> str:
    """One line per run: "name: answered/total answered"."""
    return "\n".join(
        tr("{name}: {coverage} answered").format(name=i.path.name, coverage=i.coverage) for i in infos
    )
