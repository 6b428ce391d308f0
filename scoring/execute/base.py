"""The executor interface and its local implementation (serial or a process pool)."""

from __future__ import annotations

import multiprocessing as mp
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

# Start methods: fork shares the parent's memory (feature pools) for free; spawn is safe when
# the parent holds a Qt/QGIS application, whose threads a forked child would inherit broken.
START_METHODS = ("fork", "spawn", "forkserver")


def progress_bar(total: int, desc: str, unit: str, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, disable=not enabled, file=sys.stderr, dynamic_ncols=True)


class Executor:
    """Maps ``fn(item, shared)`` over items; yields the results in the items' order.

    ``distributed`` tells a stage whether workers may sit on other machines (then a worker
    writes nothing the client needs: results travel back and the client writes them)."""

    name = "executor"
    distributed = False
    workers = 1
    address: str | None = None  # a scheduler a child process can join (Dask only)
    dashboard: str | None = None

    def map(
        self,
        fn: Callable[[T, Any], R],
        items: Iterable[T],
        *,
        shared: Any = None,
        desc: str = "work",
        unit: str = "shard",
        progress: bool = False,
        start_method: str = "fork",
        weights: list[int] | None = None,
    ) -> Iterator[R]:
        """``fn(item, shared)`` for every item, results in the items' order. ``weights``: what
        each item counts for in the progress bar (maps in a batch); ``start_method``: for a
        local pool (see START_METHODS)."""
        raise NotImplementedError

    def describe(self) -> str:
        return f"{self.name} ({self.workers} worker{'s' if self.workers != 1 else ''})"

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


# ---- process-pool worker side -----------------------------------------------------------------
_SHARED: list[Any] = [None]


def _init_worker(shared: Any) -> None:
    _SHARED[0] = shared


def _call(job: tuple[Callable[[Any, Any], Any], Any]) -> Any:
    fn, item = job
    return fn(item, _SHARED[0])


class LocalExecutor(Executor):
    """``jobs`` = 1: in this process, one item after the other. More: a process pool started for
    each ``map`` (so a pool never outlives the stage that needed it)."""

    name = "local"

    def __init__(self, jobs: int | None = None):
        self.workers = max(1, int(jobs or os.cpu_count() or 1))

    def describe(self) -> str:
        return "local serial" if self.workers == 1 else f"local process pool ({self.workers} processes)"

    def map(
        self,
        fn: Callable[[T, Any], R],
        items: Iterable[T],
        *,
        shared: Any = None,
        desc: str = "work",
        unit: str = "shard",
        progress: bool = False,
        start_method: str = "fork",
        weights: list[int] | None = None,
    ) -> Iterator[R]:
        items = list(items)
        if start_method not in START_METHODS:
            raise ValueError(f"start_method: one of {START_METHODS}, got {start_method!r}")
        total = sum(weights) if weights else len(items)
        jobs = min(self.workers, len(items))
        if jobs <= 1:
            with progress_bar(total, desc, unit, progress) as bar:
                for i, item in enumerate(items):
                    r = fn(item, shared)
                    bar.update(weights[i] if weights else 1)
                    yield r
            return
        ctx = mp.get_context(start_method)
        # imap keeps the items' order; one item per dispatch since shards are already
        # batches (render) or uneven (build), and the last ones should not queue behind a slow one.
        # The pool is started before the progress bar, whose monitor thread a fork must not find.
        with ctx.Pool(jobs, initializer=_init_worker, initargs=(shared,)) as pool:
            with progress_bar(total, desc, unit, progress) as bar:
                jobs_ = ((fn, item) for item in items)
                for i, r in enumerate(pool.imap(_call, jobs_, chunksize=1)):
                    bar.update(weights[i] if weights else 1)
                    yield r
