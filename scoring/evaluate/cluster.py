"""A sweep's runs as tasks on a Dask cluster (`evaluate --scheduler` / `--dask-workers`).

Each run (participant, city, modality, task; its forms inside) is one task calling the same
`run_benchmark` a local sweep awaits, journaling into the run directory, so:
- a killed worker loses no finished request (every reply is fsync'ed to the journal as it
  arrives) and the scheduler re-runs the task elsewhere, which resumes from the journal;
- a re-run task never duplicates a sample (a key with an "ok" record is never sent again);
- requests to one endpoint share a cluster-wide semaphore (scoring.runner.cluster_limit).
This needs OUT on a filesystem every worker sees at the same path (checked before the runs).
Map runs are sent once their city's maps are drawn; progress is followed from the journals.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scoring.errors import InputError
from scoring.execute import Executor
from scoring.formats.rundir import PREDICTIONS
from scoring.runner.config import ModelSpec
from scoring.runner.run import RunStoppedError, RunSummary, run_benchmark

POLL_S = 0.25  # how often the client looks at task states and journals


@dataclass(frozen=True)
class RunJob:
    bench: str
    spec: ModelSpec
    modality: str
    task: str
    run_dir: str
    limit: int | None


def run_job(job: RunJob, _shared: Any = None) -> dict:
    """One run on a worker: its summary, or {"stopped": why} when the endpoint refused it."""
    try:
        summary = run_benchmark(
            job.bench, job.spec, job.modality, job.task, None, job.run_dir, progress=False, limit=job.limit
        )
    except RunStoppedError as exc:
        return {"stopped": str(exc)}
    return summary.as_dict()


def _probe(path: str, _shared: Any = None) -> str | None:
    p = Path(path)
    return p.read_text() if p.is_file() else None


def check_shared_out(executor: Executor, out: Path) -> None:
    """Every worker must see OUT (benchmarks, maps, journals) at the same path."""
    token = uuid.uuid4().hex
    probe = out / f".shared-fs-probe-{token}"
    probe.write_text(token)
    try:
        seen = list(executor.map(_probe, [str(probe.resolve())] * max(1, executor.workers), desc="probe"))
    finally:
        probe.unlink(missing_ok=True)
    if any(s != token for s in seen):
        raise InputError(
            f"{out}: not visible to every Dask worker at the same path; evaluate on a cluster needs "
            "OUT on a shared filesystem (build, render and score do not)"
        )


class JournalFollower:
    """Advances a run's display line as its journal grows (a record per reply)."""

    def __init__(self, r: Any):
        self.r, self.offset, self.records = r, 0, 0
        self.follower = r.start(r.line.total)
        self.path = Path(r.run_dir) / PREDICTIONS

    def poll(self) -> None:
        try:
            with open(self.path, "rb") as fh:
                fh.seek(self.offset)
                data = fh.read()
        except OSError:
            return
        self.offset += len(data)
        new = data.count(b"\n")
        # records include retries: stay one short of the total until the run's summary arrives
        new = min(new, max(0, self.r.line.total - 1 - self.r.line.done))
        for _ in range(new):
            self.follower.finish(True)

    def complete(self, summary: RunSummary) -> None:
        line = self.r.line
        for _ in range(max(0, summary.failed - line.failed)):
            self.follower.finish(False)
        for _ in range(max(0, summary.samples - line.done)):
            self.follower.finish(True)


async def run_all_on_cluster(
    executor: Any, plan: Any, runs: list, specs: dict, renderer: Any, display: Any
) -> tuple[dict[str, str], float]:
    """Every run of the sweep as a cluster task, map runs once their maps exist; returns
    (stopped participants, seconds)."""
    client = executor.client
    stopped: dict[str, str] = {}
    t0 = time.perf_counter()
    render = asyncio.create_task(renderer.run())
    await asyncio.sleep(0)  # the renderer registers each city's maps before anyone waits for them
    waiting = list(runs)
    running: dict[Any, tuple[Any, JournalFollower]] = {}
    token, n = uuid.uuid4().hex[:8], 0
    try:
        while waiting or running:
            for r in list(waiting):
                if r.participant.name in stopped:
                    waiting.remove(r)
                    display.ended(r.line, "skipped", f"{r.participant.name} stopped")
                    continue
                if r.needs_maps:
                    fut = renderer.done.get(r.city.bench)
                    if fut is not None and not fut.done():
                        continue
                    await renderer.ready(r.city.bench)  # raises if the render failed
                waiting.remove(r)
                job = RunJob(
                    str(r.city.bench),
                    specs[r.participant.name],
                    r.modality,
                    r.task,
                    str(r.run_dir),
                    plan.limit,
                )
                n += 1  # the key names the run (the dashboard shows it): city/participant/modality-task
                key = f"run-{token}-{n}-{r.city.name}/{r.participant.name}/{r.modality}-{r.task}"
                running[client.submit(run_job, job, key=key, pure=False)] = (r, JournalFollower(r))
            for fut, (r, follow) in list(running.items()):
                follow.poll()
                if not fut.done():
                    continue
                del running[fut]
                out = fut.result()  # an unexpected error in a run ends the sweep, as locally
                if "stopped" in out:
                    stopped[r.participant.name] = out["stopped"]
                    display.ended(r.line, "stopped", out["stopped"])
                    continue
                r.summary = RunSummary(**out)
                follow.complete(r.summary)
                display.ended(r.line, "complete" if not r.summary.failed else "incomplete")
            await asyncio.sleep(POLL_S)
        await render
    finally:
        if running:
            client.cancel(list(running))
        if not render.done():
            render.cancel()
    return stopped, time.perf_counter() - t0
