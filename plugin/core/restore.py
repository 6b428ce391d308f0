"""The last verdicts of the dock's endpoint read back from the runs on disk when a benchmark is
opened (after a restart the table showed none although every run was there), scored in a task:
a whole benchmark's predictions take seconds to score."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from pathlib import Path

from qgis.core import QgsMessageLog, QgsTask

from scoring.formats.benchmark import Benchmark
from scoring.formats.rundir import PREDICTIONS, final_predictions, find_run_dir
from scoring.runner.config import ModelSpec, public_url
from scoring.score import score_prediction
from scoring.vocab import TASKS, Modality, Verdict

from ..utils.compat import MSG_WARNING
from ..utils.i18n import tr
from .tasks import LOG_TAG

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
                if inst is None:
                    continue
                try:
                    verdict = score_prediction(inst, record, self.bench.path).as_dict()
                except Exception as exc:  # noqa: BLE001 - a scorer bug must not kill the GUI
                    verdict = {"verdict": Verdict.ERROR, "reason": f"scoring failed: {exc}"}
                verdict["_run"] = verdict["_endpoint"] = self.spec.name
                self.results[inst["id"]] = verdict

    def finished(self, result: bool) -> None:
        _RUNNING.discard(self)
        if self.details:
            QgsMessageLog.logMessage(self.details, LOG_TAG, MSG_WARNING)
        try:
            self.on_done(self)
        except Exception:  # noqa: BLE001 - a GUI callback must not take QGIS down
            QgsMessageLog.logMessage(traceback.format_exc(), LOG_TAG, MSG_WARNING)
