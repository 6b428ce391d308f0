"""Render every instance of a benchmark directory into <bench>/maps/, in parallel."""

from __future__ import annotations

import logging
import multiprocessing as mp
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from scoring.benchmark import TASK_FILES, Benchmark
from scoring.errors import InputError
from scoring.render.context import ContextIndex
from scoring.render.renderer import render_instance

log = logging.getLogger(__name__)


@dataclass
class RenderSummary:
    out_dir: Path
    rendered: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def maps_per_second(self) -> float:
        return len(self.rendered) / self.seconds if self.seconds > 0 else float("nan")


def load_render_inputs(
    bench: Benchmark | str | Path, ids: Iterable[str] | None = None
) -> tuple[Benchmark, list[dict], ContextIndex]:
    """(benchmark, the instances to draw: all or ``ids`` in that order, its context index)."""
    bench = bench if isinstance(bench, Benchmark) else Benchmark.open(bench)
    instances = bench.select(ids) if ids else bench.all_instances()
    if not instances:
        raise InputError(f"no instances in {bench.path} (expected {' or '.join(TASK_FILES.values())})")
    return bench, instances, ContextIndex.from_file(bench.context_path, bench.epsg)


# ---- worker side -------------------------------------------------------------------------------
_WORKER_STATE: dict[str, Any] = {}


def _init_worker(context_path: str, epsg: int, out_dir: str) -> None:
    _WORKER_STATE["context"] = ContextIndex.from_file(context_path, epsg)
    _WORKER_STATE["out"] = out_dir


def _work(instance: dict[str, Any]) -> str:
    render_instance(instance, _WORKER_STATE["context"], _WORKER_STATE["out"])
    return instance["id"]


def render_benchmark(
    bench_dir: Benchmark | str | Path,
    jobs: int | None = None,
    progress: bool = True,
    ids: Iterable[str] | None = None,
    out_dir: str | Path | None = None,
) -> RenderSummary:
    """Render all (or the given) instances of a benchmark into <bench>/maps/ (or out_dir).

    Workers are started with the 'spawn' method (safe even when the parent holds a QGIS/Qt
    application) and each loads the context index once."""
    bench, instances, context = load_render_inputs(bench_dir, ids)
    out = Path(out_dir) if out_dir else bench.maps_dir
    out.mkdir(parents=True, exist_ok=True)
    jobs = max(1, int(jobs or os.cpu_count() or 1))
    jobs = min(jobs, len(instances))
    summary = RenderSummary(out)
    bar = tqdm(total=len(instances), desc="render", unit="map", disable=not progress)
    t0 = time.perf_counter()
    try:
        if jobs == 1:
            for inst in instances:
                render_instance(inst, context, out)
                summary.rendered.append(inst["id"])
                bar.update()
        else:
            ctx = mp.get_context("spawn")
            chunk = max(1, min(8, len(instances) // (jobs * 4)))
            with ctx.Pool(
                jobs,
                initializer=_init_worker,
                initargs=(str(bench.context_path), bench.epsg, str(out)),
            ) as pool:
                for iid in pool.imap_unordered(_work, instances, chunksize=chunk):
                    summary.rendered.append(iid)
                    bar.update()
    finally:
        bar.close()
    summary.seconds = time.perf_counter() - t0
    log.info("rendered %d maps into %s in %.1f s", len(summary.rendered), out, summary.seconds)
    return summary
