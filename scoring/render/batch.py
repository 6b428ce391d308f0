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

from scoring.benchfiles import TASK_FILES, iter_instances, load_manifest
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


def read_manifest(bench_dir: Path) -> dict[str, Any]:
    manifest, _ = load_manifest(bench_dir)
    try:
        epsg = int(manifest["crs"]["epsg"])
    except (KeyError, TypeError, ValueError):
        raise InputError(f"{bench_dir / 'manifest.json'}: invalid manifest (needs crs.epsg)") from None
    manifest["_epsg"] = epsg
    return manifest


def load_benchmark(bench_dir: str | Path, ids: Iterable[str] | None = None):
    """(manifest, instances, ContextIndex) of a benchmark directory."""
    bench_dir = Path(bench_dir)
    manifest = read_manifest(bench_dir)
    instances = list(iter_instances(bench_dir))
    if not instances:
        raise InputError(f"no instances in {bench_dir} (expected {' or '.join(TASK_FILES.values())})")
    if ids:
        wanted = list(dict.fromkeys(ids))
        by_id = {i["id"]: i for i in instances}
        missing = [i for i in wanted if i not in by_id]
        if missing:
            raise InputError(f"unknown instance id(s): {', '.join(missing[:5])}")
        instances = [by_id[i] for i in wanted]
    context = ContextIndex.from_file(bench_dir / "context.geojsonl", manifest["_epsg"])
    return manifest, instances, context


# ---- worker side -------------------------------------------------------------------------------
_W: dict[str, Any] = {}


def _init_worker(context_path: str, epsg: int, out_dir: str) -> None:
    _W["context"] = ContextIndex.from_file(context_path, epsg)
    _W["out"] = out_dir


def _work(instance: dict[str, Any]) -> str:
    render_instance(instance, _W["context"], _W["out"])
    return instance["id"]


def render_benchmark(
    bench_dir: str | Path,
    jobs: int | None = None,
    progress: bool = True,
    ids: Iterable[str] | None = None,
    out_dir: str | Path | None = None,
) -> RenderSummary:
    """Render all (or the given) instances of a benchmark into <bench>/maps/ (or out_dir).

    Workers are started with the 'spawn' method (safe even when the parent holds a QGIS/Qt
    application) and each loads the context index once."""
    from tqdm import tqdm

    bench_dir = Path(bench_dir)
    manifest, instances, context = load_benchmark(bench_dir, ids)
    out = Path(out_dir) if out_dir else bench_dir / "maps"
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
                initargs=(str(bench_dir / "context.geojsonl"), manifest["_epsg"], str(out)),
            ) as pool:
                for iid in pool.imap_unordered(_work, instances, chunksize=chunk):
                    summary.rendered.append(iid)
                    bar.update()
    finally:
        bar.close()
    summary.seconds = time.perf_counter() - t0
    log.info("rendered %d maps into %s in %.1f s", len(summary.rendered), out, summary.seconds)
    return summary
