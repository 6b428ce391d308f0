"""Render every instance of a benchmark directory into <bench>/maps/, in batches on an executor
(scoring.execute: local processes or a Dask cluster)."""

from __future__ import annotations

import gc
import hashlib
import json
import logging
import multiprocessing as mp
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scoring.errors import InputError
from scoring.execute import Executor, LocalExecutor
from scoring.execute.base import Progress
from scoring.formats.benchmark import TASK_FILES, Benchmark
from scoring.formats.maps_index import write_index
from scoring.formats.records import Instance
from scoring.render.context import ContextIndex
from scoring.render.renderer import render_map
from scoring.render.sidecar.records import write_map_files

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
) -> tuple[Benchmark, list[Instance], ContextIndex]:
    """(benchmark, the instances to draw: all or ``ids`` in that order, its context index)."""
    bench = bench if isinstance(bench, Benchmark) else Benchmark.open(bench)
    instances = bench.select(ids) if ids else bench.all_instances()
    if not instances:
        raise InputError(f"no instances in {bench.path} (expected {' or '.join(TASK_FILES.values())})")
    return bench, instances, ContextIndex.from_file(bench.context_path, bench.epsg)


# ---- worker side -------------------------------------------------------------------------------
@dataclass(frozen=True)
class MapContext:
    """A benchmark's context file as bytes: sent once to each worker (which may sit on another
    machine), where it is indexed once per process (`_context_index`)."""

    name: str  # for error messages
    text: bytes
    epsg: int
    sha256: str
    # where workers on this machine write the maps themselves (None: they hand back the bytes)
    out_dir: str | None = None

    @classmethod
    def of(cls, bench: Benchmark, out_dir: str | None = None) -> MapContext:
        path = bench.context_path
        text = path.read_bytes() if path.is_file() else b""
        return cls(str(path), text, bench.epsg, hashlib.sha256(text).hexdigest(), out_dir)


_INDEXES: dict[tuple[str, int], ContextIndex] = {}
_TUNED: list[bool] = []  # this pool worker's collector is tuned


def _context_index(ctx: MapContext) -> ContextIndex:
    key = (ctx.sha256, ctx.epsg)
    if key not in _INDEXES:

        def features():
            for n, line in enumerate(ctx.text.decode("utf-8").splitlines(), 1):
                if line.strip():
                    try:
                        yield json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise InputError(f"{ctx.name}:{n}: invalid JSON ({exc.msg})") from None

        _INDEXES.clear()  # one city at a time per worker: contexts are large
        _INDEXES[key] = ContextIndex.from_features(features(), ctx.epsg)
    if ctx.out_dir is not None and mp.parent_process() is not None and not _TUNED:
        # a local pool worker of ours (the index built here or inherited from a forking parent):
        # the index (~180k objects) lives as long as the process, so the collector's passes need
        # not walk it again map after map; a map's own garbage (its figure's reference cycles)
        # is collected every few maps, not 40 times a map
        gc.freeze()
        gc.set_threshold(20_000, 10, 10)
        _TUNED.append(True)
    return _INDEXES[key]


def render_batch(instances: list[Instance], ctx: MapContext) -> list[tuple[bytes, dict[str, Any]]]:
    """(PNG bytes, sidecar record) of each instance: files are written by the caller."""
    index = _context_index(ctx)
    return [render_map(inst, index) for inst in instances]


def render_batch_to_files(instances: list[Instance], ctx: MapContext) -> list[str]:
    """The ids of the instances drawn, each map written into ctx.out_dir by this worker (as the
    caller would: each file atomically, PNG last): 7 MB of pixels deflate to ~0.4 MB of PNG that
    need not travel through a pipe to the parent and be written there."""
    if ctx.out_dir is None:
        raise ValueError("render_batch_to_files needs a MapContext with out_dir")
    out = Path(ctx.out_dir)
    index = _context_index(ctx)
    done = []
    for inst in instances:
        png, record = render_map(inst, index)
        write_map_files(out, png, record)
        done.append(record["id"])
    return done


def _warm_before_fork(instance: Instance, ctx: MapContext) -> None:
    """Index the context and draw one map (discarded) in this process before forking the
    workers: they inherit the index, the fonts, the text layouts and the artist templates
    instead of building them each (~1.3 CPU-s a worker). The collector is frozen so that the
    workers neither copy nor walk the inherited objects."""
    render_map(instance, _context_index(ctx))
    gc.collect()
    gc.freeze()


def render_benchmark(
    bench_dir: Benchmark | str | Path,
    jobs: int | None = None,
    progress: Progress = True,
    ids: Iterable[str] | None = None,
    out_dir: str | Path | None = None,
    executor: Executor | None = None,
    start_method: str = "spawn",
) -> RenderSummary:
    """Render all (or the given) instances of a benchmark into <bench>/maps/ (or out_dir).

    Batches of instances run on ``executor`` (default: ``jobs`` local processes, started with
    ``start_method``: 'spawn' is safe even when the parent holds a QGIS/Qt application; 'fork',
    for a single-threaded parent such as `spatialgap render`, indexes the context and draws the
    first map here, and the workers inherit both instead of importing, indexing and warming up
    each). Local workers write the maps themselves; a Dask cluster's (maybe on other machines)
    hand them back as bytes to be written here. Either way each file is written atomically, PNG
    last."""
    bench = bench_dir if isinstance(bench_dir, Benchmark) else Benchmark.open(bench_dir)
    instances = bench.select(ids) if ids else bench.all_instances()
    if not instances:
        raise InputError(f"no instances in {bench.path} (expected {' or '.join(TASK_FILES.values())})")
    out = Path(out_dir) if out_dir else bench.maps_dir
    out.mkdir(parents=True, exist_ok=True)
    executor = executor or LocalExecutor(min(max(1, int(jobs or os.cpu_count() or 1)), len(instances)))
    size = max(1, min(8, len(instances) // (executor.workers * 4)))
    batches = [instances[i : i + size] for i in range(len(instances)) if i % size == 0]
    summary = RenderSummary(out)
    t0 = time.perf_counter()
    common: dict[str, Any] = dict(
        desc="render", unit="map", progress=progress, start_method="spawn", weights=[len(b) for b in batches]
    )
    if not executor.distributed:  # workers on this machine write the maps themselves
        ctx = MapContext.of(bench, str(out.resolve()))
        if start_method == "fork" and executor.workers > 1 and len(batches) > 1:
            _warm_before_fork(instances[0], ctx)
        common["start_method"] = start_method
        try:
            for ids in executor.map(render_batch_to_files, batches, shared=ctx, **common):
                summary.rendered.extend(ids)
        finally:
            if start_method == "fork":
                gc.unfreeze()
    else:
        for drawn in executor.map(render_batch, batches, shared=MapContext.of(bench), **common):
            for png, record in drawn:
                write_map_files(out, png, record)
                summary.rendered.append(record["id"])
    write_index(out)  # the maps' identity: what runs record and check (scoring.formats.maps_index)
    summary.seconds = time.perf_counter() - t0
    log.info("rendered %d maps into %s in %.1f s", len(summary.rendered), out, summary.seconds)
    return summary
