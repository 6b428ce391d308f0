"""Render every instance of a benchmark directory into <bench>/maps/, in batches on an executor
(scoring.execute: local processes or a Dask cluster)."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scoring.benchmark import TASK_FILES, Benchmark
from scoring.errors import InputError
from scoring.execute import Executor, LocalExecutor
from scoring.render.context import ContextIndex
from scoring.render.renderer import render_map
from scoring.render.sidecar import write_map_files

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
@dataclass(frozen=True)
class MapContext:
    """A benchmark's context file as bytes: sent once to each worker (which may sit on another
    machine), where it is indexed once per process (`_context_index`)."""

    name: str  # for error messages
    text: bytes
    epsg: int
    sha256: str

    @classmethod
    def of(cls, bench: Benchmark) -> MapContext:
        path = bench.context_path
        text = path.read_bytes() if path.is_file() else b""
        return cls(str(path), text, bench.epsg, hashlib.sha256(text).hexdigest())


_INDEXES: dict[tuple[str, int], ContextIndex] = {}


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
    return _INDEXES[key]


def render_batch(instances: list[dict[str, Any]], ctx: MapContext) -> list[tuple[bytes, dict[str, Any]]]:
    """(PNG bytes, sidecar record) of each instance: files are written by the caller."""
    index = _context_index(ctx)
    return [render_map(inst, index) for inst in instances]


def render_benchmark(
    bench_dir: Benchmark | str | Path,
    jobs: int | None = None,
    progress: bool = True,
    ids: Iterable[str] | None = None,
    out_dir: str | Path | None = None,
    executor: Executor | None = None,
) -> RenderSummary:
    """Render all (or the given) instances of a benchmark into <bench>/maps/ (or out_dir).

    Batches of instances run on ``executor`` (default: ``jobs`` local processes, started with
    'spawn', safe even when the parent holds a QGIS/Qt application); maps come back as bytes and
    are written here, each file atomically, PNG last."""
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
    maps = executor.map(
        render_batch,
        batches,
        shared=MapContext.of(bench),
        desc="render",
        unit="map",
        progress=progress,
        start_method="spawn",
        weights=[len(b) for b in batches],
    )
    for drawn in maps:
        for png, record in drawn:
            write_map_files(out, png, record)
            summary.rendered.append(record["id"])
    summary.seconds = time.perf_counter() - t0
    log.info("rendered %d maps into %s in %.1f s", len(summary.rendered), out, summary.seconds)
    return summary
