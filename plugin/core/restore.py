"""The last verdicts of the dock's endpoint read back from the runs on disk when a benchmark is
opened (after a restart the table showed none although every run was there). The runs are read
in a task; the answers are scored back on the main thread a batch per event-loop turn (QGIS
stays responsive): scoring shares cached pyproj transformers, which must not cross threads."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from pathlib import Path

from qgis.core import QgsMessageLog, QgsTask
from qgis.PyQt.QtCore import QTimer

from scoring.formats.benchmark import Benchmark
from scoring.formats.records import Instance
from scoring.formats.rundir import PREDICTIONS, final_predictions, find_run_dir
from scoring.runner.config import ModelSpec, public_url
from scoring.score import score_prediction
from scoring.vocab import TASKS, Modality, Verdict

from ..utils.compat import MSG_WARNING
from ..utils.i18n import tr
from .tasks import LOG_TAG

SCORE_BATCH = 40  # answers scored per event-loop turn
_RUNNING: set[RestoreTask] = set()  # the Python side of a task outlives its run()


class RestoreTask(QgsTask):
    """Instance id -> verdict dict of the endpoint's runs in `modality` (its newest answer per
    instance), then `on_done(task)` on the main thread."""

    def __init__(
        self, bench: Benchmark, runs_root: Path, spec: ModelSpec, modality: Modality, on_done: Callable
    ):
        super().__init__(
            tr("Spatial Gap: reading the runs of {model}").format(model=spec.name), QgsTask.Flag(0)
        )
        self.bench, self.runs_root, self.spec, self.modality = bench, Path(runs_root), spec, modality
        self.on_done = on_done
        self.records: list[tuple[Instance, dict]] = []  # (instance, final record)
        self.results: dict[str, dict] = {}
        self.details: str | None = None
        _RUNNING.add(self)

    def run(self) -> bool:
        # Nothing may escape run(): an exception there aborts QGIS.
        try:
            self._read()
        except BaseException:  # noqa: BLE001 - logged in finished()
            self.details = traceback.format_exc()
        return True

    def _read(self) -> None:
        identity = {
            "kind": self.spec.kind,
            "base_url": public_url(self.spec.base_url),
            "model": self.spec.model,
        }
        for task in TASKS:
            if not self.runs_root.is_dir():
                return
            path = find_run_dir(self.runs_root, self.spec.name, self.modality, task, identity) / PREDICTIONS
            if not path.is_file():
                continue
            for record in final_predictions(path).values():
                inst = self.bench.get(record.get("instance_id", ""))
                if inst is not None:
                    self.records.append((inst, record))

    def finished(self, result: bool) -> None:
        if self.details:
            QgsMessageLog.logMessage(self.details, LOG_TAG, MSG_WARNING)
        QTimer.singleShot(0, lambda: self._score_batch())  # not bound: the C++ task is gone by then

    def _score_batch(self) -> None:
        """Score SCORE_BATCH answers, then yield to the event loop; on_done(task) at the end."""
        batch, self.records = self.records[:SCORE_BATCH], self.records[SCORE_BATCH:]
        for inst, record in batch:
            try:
                verdict = score_prediction(inst, record, self.bench.path).as_dict()
            except Exception as exc:  # noqa: BLE001 - a scorer bug must not kill the GUI
                verdict = {"verdict": Verdict.ERROR, "reason": f"scoring failed: {exc}"}
            verdict["_run"] = verdict["_endpoint"] = self.spec.name
            self.results[inst["id"]] = verdict
        if self.records:
            QTimer.singleShot(0, lambda: self._score_batch())  # not bound: the C++ task is gone by then
            return
        _RUNNING.discard(self)
        try:
            self.on_done(self)
        except Exception:  # noqa: BLE001 - a GUI callback must not take QGIS down
            QgsMessageLog.logMessage(traceback.format_exc(), LOG_TAG, MSG_WARNING)
