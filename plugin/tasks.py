"""Background model runs: a cancellable QgsTask over scoring.runner with the QGIS transport.

run() executes in a worker thread and never lets an exception escape (one escaping a QgsTask
aborts QGIS); finished() runs on the main thread and is the only place results reach the GUI."""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import re
import traceback
from pathlib import Path

from qgis.core import QgsMessageLog, QgsTask

from scoring.errors import SpatialGapError
from scoring.runner.config import Redactor, StaticKeyProvider
from scoring.runner.journal import Journal, final_predictions, sample_id
from scoring.runner.transport import ThreadedTransport

from .compat import MSG_WARNING
from .i18n import tr
from .transport import QgisTransport, RunCancelled

LOG_TAG = "Spatial Gap"


def run_dir_name(model: str, modality: str, task: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", model).strip("-") or "model"
    return f"{safe}-{modality}-{task}"


class RunTask(QgsTask):
    """Send instances of one task to one model; results stay in `out_dir` (a resumable run)."""

    def __init__(
        self,
        bench_dir,
        spec,
        key: str | None,
        modality: str,
        task: str,
        forms,
        ids: list[str],
        out_dir,
        on_done=None,
    ):
        super().__init__(
            tr("Spatial Gap: {model} on {n} instance(s)").format(model=spec.name, n=len(ids)),
            QgsTask.CanCancel,
        )
        self.bench_dir, self.spec, self.modality, self.task = Path(bench_dir), spec, modality, task
        self.forms, self.ids, self.out_dir = list(forms), list(ids), Path(out_dir)
        self._key = key  # resolved on the main thread from the auth database
        self.on_done = on_done
        self.summary = None
        self.error: str | None = None
        self.cancelled_by_user = False
        self.transport = QgisTransport(self.isCanceled)
        self._redactor = Redactor([key])

    def cancel(self):
        self.transport.cancel_all()
        super().cancel()

    def run(self) -> bool:
        # Everything, the import included, inside the try: an exception escaping run() aborts QGIS.
        try:
            from scoring.runner.run import run_benchmark

            total = max(1, len(self.ids) * len(self.forms))
            transport = ThreadedTransport(
                _Progressing(self.transport, self, total), max_workers=max(1, self.spec.concurrency)
            )
            self.summary = run_benchmark(
                self.bench_dir,
                self.spec,
                self.modality,
                self.task,
                self.forms,
                self.out_dir,
                transport=transport,
                key_provider=StaticKeyProvider(self._key),
                progress=False,
                ids=self.ids,
            )
            self.setProgress(100)
            return True
        except RunCancelled:
            self.cancelled_by_user = True
        except BaseExceptionGroup as eg:  # several workers stopped at once
            if all(isinstance(e, RunCancelled) for e in eg.exceptions):
                self.cancelled_by_user = True
            else:
                self.error = self._redactor.text("; ".join(str(e) for e in eg.exceptions)[:500])
        except SpatialGapError as exc:
            self.error = self._redactor.text(str(exc))
        except Exception as exc:  # noqa: BLE001 - must not escape run()
            self.error = self._redactor.text(f"{type(exc).__name__}: {exc}")
            QgsMessageLog.logMessage(self._redactor.text(traceback.format_exc()), LOG_TAG, MSG_WARNING)
        return False

    def finished(self, result: bool) -> None:
        if self.on_done is not None:
            try:
                self.on_done(self, result)
            except Exception:  # noqa: BLE001 - a GUI callback must not take QGIS down
                QgsMessageLog.logMessage(traceback.format_exc(), LOG_TAG, MSG_WARNING)

    def finals(self) -> dict[str, dict]:
        path = self.out_dir / "predictions.jsonl"
        return final_predictions(path) if path.is_file() else {}


class _Progressing:
    """Counts finished requests for the task's progress bar."""

    def __init__(self, inner: QgisTransport, task: QgsTask, total: int):
        self.inner, self.task, self.total = inner, task, total

    def post_json(self, *args, **kwargs):
        try:
            return self.inner.post_json(*args, **kwargs)
        finally:
            self.task.setProgress(min(99.0, 100.0 * self.inner.completed / self.total))


# ------------------------------------------------------------------------- human baseline


def record_human_answer(
    bench_dir,
    runs_root,
    analyst: str,
    instance: dict,
    text: str,
    form: str = "open",
    modality: str = "geojson",
) -> Path:
    """Append an analyst's answer as a run named after the analyst (same layout as a model run,
    so the scorer and report treat it alike). Returns the run directory."""
    bench_dir = Path(bench_dir)
    analyst = analyst.strip()
    if not analyst:
        raise SpatialGapError(tr("give the analyst's name first"))
    task = instance.get("task", "qa")
    form = "edit" if task == "edit" else form
    name = f"human-{analyst}"
    run = Path(runs_root) / run_dir_name(name, modality, task)
    run.mkdir(parents=True, exist_ok=True)
    bench_sha = hashlib.sha256((bench_dir / "manifest.json").read_bytes()).hexdigest()
    mpath = run / "manifest.json"
    now = _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds")
    manifest = (
        json.loads(mpath.read_text(encoding="utf-8"))
        if mpath.is_file()
        else {
            "tool": "spatialgap",
            "kind": "human",
            "started_at": now,
            "forms": [],
            "model": {"name": name, "kind": "human", "model": name, "base_url": ""},
            "modality": modality,
            "task": task,
            "benchmark_manifest_sha256": bench_sha,
            "benchmark": {"path": str(bench_dir.resolve()), "manifest_sha256": bench_sha},
        }
    )
    if manifest.get("benchmark_manifest_sha256") != bench_sha:
        raise SpatialGapError(tr("{run} holds answers for another benchmark").format(run=run))
    if form not in manifest["forms"]:
        manifest["forms"].append(form)
    manifest["ended_at"] = now
    manifest["status"] = "complete"
    with Journal(run / "predictions.jsonl") as journal:
        key = hashlib.sha256(f"{instance['id']}|{form}|{now}".encode()).hexdigest()
        journal.append(
            {
                "v": 1,
                "key": key,
                "sample": sample_id(instance["id"], form),
                "instance_id": instance["id"],
                "task": task,
                "form": form,
                "modality": modality,
                "relation": instance.get("relation"),
                "attempt": 1,
                "attempt_kind": "human",
                "model_name": name,
                "model": name,
                "status": "ok",
                "text": text,
                "final": True,
                "time": now,
            }
        )
    tmp = mpath.with_name("manifest.json.tmp")
    tmp.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, mpath)
    return run
