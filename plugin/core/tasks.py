"""Background model runs: a cancellable QgsTask over scoring.runner with the QGIS transport.

run() executes in a worker thread and never lets an exception escape (one escaping a QgsTask
aborts QGIS); finished() runs on the main thread and is the only place results reach the GUI."""

from __future__ import annotations

import asyncio
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

from qgis.core import QgsMessageLog, QgsTask

from scoring.errors import SpatialGapError
from scoring.formats.benchmark import Benchmark
from scoring.formats.records import Instance
from scoring.formats.rundir import PREDICTIONS, final_predictions, find_run_dir
from scoring.runner.config import ModelSpec, Redactor, StaticKeyProvider, public_url
from scoring.runner.transport import ThreadedTransport
from scoring.score import score_prediction
from scoring.vocab import TASKS, Form, Modality, Task, Verdict

from ..core.transport import QgisTransport, RunCancelledError
from ..utils.compat import MSG_WARNING
from ..utils.i18n import tr

if TYPE_CHECKING:  # the runner itself is imported when a run starts, in the worker
    from scoring.runner.run import RunSummary

LOG_TAG = "Spatial Gap"
CANCEL_POLL_S = 0.05  # how soon a cancelled run stops, whatever it is doing


class RunTask(QgsTask):
    """Send instances of one task to one model; results stay in `out_dir` (a resumable run)."""

    def __init__(
        self,
        bench_dir,
        spec,
        key: str | None,
        modality: Modality,
        task: str,
        forms,
        ids: list[str],
        out_dir,
        on_done=None,
    ):
        super().__init__(
            tr("Spatial Gap: {model} on {n} instance(s)").format(model=spec.name, n=len(ids)),
            QgsTask.Flag.CanCancel,
        )
        self.bench_dir, self.spec, self.modality, self.task = Path(bench_dir), spec, modality, task
        self.forms, self.ids, self.out_dir = list(forms), list(ids), Path(out_dir)
        self._key = key  # resolved on the main thread from the auth database
        self.on_done = on_done
        self.summary: RunSummary | None = None
        self.error: str | None = None
        self.stop_message: str | None = None  # the server's words when the endpoint refused the run
        self.cancelled_by_user = False
        self.ended_at: float | None = None  # time.monotonic() when run() returned
        self.transport = QgisTransport(self.isCanceled)
        self.observer = _TaskObserver(self, max(1, len(self.ids) * len(self.forms)))
        self._redactor = Redactor([key])

    def cancel(self):
        self.transport.cancel_all()
        super().cancel()

    def run(self) -> bool:
        try:
            return self._run()
        finally:
            self.ended_at = time.monotonic()

    def _run(self) -> bool:
        # Everything, the import included, inside the try: an exception escaping run() aborts QGIS.
        try:
            self.summary = asyncio.run(self._run_cancellable())
            self.setProgress(100)
            return True
        except (RunCancelledError, asyncio.CancelledError):
            self.cancelled_by_user = True
        except BaseExceptionGroup as eg:  # several workers stopped at once
            if all(isinstance(e, (RunCancelledError, asyncio.CancelledError)) for e in eg.exceptions):
                self.cancelled_by_user = True
            else:
                self.error = self._redactor.text("; ".join(str(e) for e in eg.exceptions)[:500])
        except SpatialGapError as exc:
            self.error = self._redactor.text(str(exc))
            stop = getattr(exc, "stop", None)  # RunStoppedError: the endpoint refused the whole run
            if stop is not None:
                self.stop_message = self._redactor.text(stop.message)
        except Exception as exc:  # noqa: BLE001 - must not escape run()
            self.error = self._redactor.text(f"{type(exc).__name__}: {exc}")
            QgsMessageLog.logMessage(self._redactor.text(traceback.format_exc()), LOG_TAG, MSG_WARNING)
        if self.isCanceled():
            self.cancelled_by_user, self.error = True, None
        return False

    async def _run_cancellable(self) -> RunSummary:
        """The run, cancelled within CANCEL_POLL_S of the task's cancel whatever it is doing
        (a request in flight is aborted by the transport; a back-off sleep by this watcher)."""
        from scoring.runner.run import run_benchmark_async  # the runner loads only when a run starts

        transport = ThreadedTransport(self.transport, max_workers=max(1, self.spec.concurrency))
        job = asyncio.ensure_future(
            run_benchmark_async(
                self.bench_dir,
                self.spec,
                self.modality,
                self.task,
                self.forms,
                self.out_dir,
                transport=transport,
                key_provider=StaticKeyProvider(self._key),
                progress=lambda _total: self.observer,
                ids=self.ids,
            )
        )
        while not job.done():
            if self.isCanceled():
                self.transport.cancel_all()
                job.cancel()
                break
            await asyncio.wait({job}, timeout=CANCEL_POLL_S)
        return await job

    def finished(self, result: bool) -> None:
        if self.on_done is not None:
            try:
                self.on_done(self, result)
            except Exception:  # noqa: BLE001 - a GUI callback must not take QGIS down
                QgsMessageLog.logMessage(traceback.format_exc(), LOG_TAG, MSG_WARNING)

    def finals(self) -> dict[str, dict]:
        path = self.out_dir / PREDICTIONS
        return final_predictions(path) if path.is_file() else {}

    def failures(self) -> list[str]:
        """One line per failed sample of this task: the instance and the server's own words."""
        lines = []
        for record in self.finals().values():
            if record.get("status") == "ok" or record.get("instance_id") not in self.ids:
                continue
            error = record.get("error") or {}
            status = f"HTTP {error['status']} " if error.get("status") else ""
            lines.append(
                f"{record.get('instance_id')}: {status}{error.get('kind', 'error')}: "
                f"{error.get('message', '')}".rstrip(": ")
            )
        return lines

    def verdicts(self, bench: Benchmark) -> dict[str, dict]:
        """Instance id -> verdict dict of the instances this task sent, scored like `spatialgap
        score` does; a scorer failure becomes an "error" verdict (never an exception in the GUI).
        A failed request's verdict carries the server's message, not only its kind."""
        out = {}
        for record in self.finals().values():
            inst = bench.get(record.get("instance_id", ""))
            if inst is None or inst["id"] not in self.ids:
                continue
            try:
                verdict = score_prediction(inst, record, bench.path).as_dict()
            except Exception as exc:  # noqa: BLE001 - a scorer bug must not kill the GUI
                QgsMessageLog.logMessage(traceback.format_exc(), LOG_TAG, MSG_WARNING)
                verdict = {"verdict": Verdict.ERROR, "reason": f"scoring failed: {exc}"}
            error = record.get("error") if record.get("status") != "ok" else None
            if isinstance(error, dict) and error.get("message"):
                verdict["reason"] = f"{verdict.get('reason', '')}: {error['message']}"[:500]
            verdict["_run"] = self.spec.name
            out[inst["id"]] = verdict
        return out


def start_runs(
    bench: Benchmark,
    runs_root: Path,
    spec: ModelSpec,
    key: str | None,
    modality: Modality,
    qa_form: str,
    instances: list[Instance],
    on_done,
) -> list[RunTask]:
    """One RunTask per task among `instances`, each in the run directory of this model (resumed
    when it holds the same model, else a new numbered one); the caller adds them to the manager."""
    identity = {"kind": spec.kind, "base_url": public_url(spec.base_url), "model": spec.model}
    tasks = []
    for task in TASKS:
        ids = [inst["id"] for inst in instances if inst.get("task") == task]
        if not ids:
            continue
        forms = [qa_form] if task is Task.QA else [Form.EDIT.value]
        out_dir = find_run_dir(runs_root, spec.name, modality, task, identity)
        tasks.append(RunTask(bench.path, spec, key, modality, str(task), forms, ids, out_dir, on_done))
    return tasks


class _TaskObserver:
    """The runner's per-sample observer: drives the task's progress (shown by QGIS and the dock)."""

    def __init__(self, task: QgsTask, total: int):
        self.task, self.total = task, total
        self.done = self.failed = self.retrying = 0

    def finish(self, ok: bool) -> None:
        if ok:
            self.done += 1
        else:
            self.failed += 1
        self.task.setProgress(min(99.0, 100.0 * (self.done + self.failed) / self.total))

    def retry_started(self) -> None:
        self.retrying += 1

    def retry_ended(self) -> None:
        self.retrying -= 1

    def close(self) -> None:
        pass
