"""The executor interface and its local implementation (serial or a process pool)."""

from __future__ import annotations

import contextlib
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


# What a stage's ``progress`` may be: a terminal bar (True), nothing (False), or a callback
# ``(done, total)`` after every item (the plugin's Processing feedback; it may raise to cancel).
ProgressCallback = Callable[[int, int], None]
Progress = bool | ProgressCallback


class _Quiet:
    """No display; also what a terminal bar falls back to when tqdm is absent (QGIS's Python:
    the plugin's installer leaves it out, so tqdm is never needed to run a stage)."""

    def __init__(self, total: int) -> None:
        self.total = total

    def update(self, n: int = 1) -> None:
        pass

    def set_postfix(self, **_: Any) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> _Quiet:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class _Callback(_Quiet):
    """Calls ``fn(done, total)`` after each update."""

    def __init__(self, total: int, fn: ProgressCallback) -> None:
        super().__init__(total)
        self.done = 0
        self.fn = fn
        fn(0, total)

    def update(self, n: int = 1) -> None:
        self.done += n
        self.fn(self.done, self.total)


def progress_bar(total: int, desc: str, unit: str, enabled: Progress) -> Any:
    """A tqdm bar (``enabled`` True and tqdm installed), a callback, or nothing."""
    if callable(enabled):
        return _Callback(total, enabled)
    if not enabled:
        return _Quiet(total)
    try:
        from tqdm import tqdm
    except ImportError:
        return _Quiet(total)
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True)


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
        progress: Progress = False,
        start_method: str = "fork",
        weights: list[int] | None = None,
    ) -> Iterator[R]:
        """``fn(item, shared)`` for every item, results in the items' order. ``weights``: what
        each item counts for in the progress (maps in a batch); ``progress``: see Progress;
        ``start_method``: for a local pool (see START_METHODS)."""
        raise NotImplementedError

    def stream(
        self, fn: Callable[[T, Any], R], items: Iterable[T], *, desc: str = "work", start_method: str = "fork"
    ) -> Iterator[R]:
        """``fn(item, None)`` for every item, results in the items' order, the items taken as they
        come: a local pool starts on the first ones while the rest are still being made (the
        build's extract stage hands over chunks while GDAL reads). By default (a cluster) the
        items are all made first, then mapped."""
        return self.map(fn, list(items), desc=desc, unit="chunk", start_method=start_method)

    def session(self, shared: Any, *, start_method: str = "fork") -> contextlib.AbstractContextManager:
        """Inside it, the maps given this ``shared`` may share their workers (a local pool is
        started once for a stage's rounds: what its workers built and cached stays). By default
        (a cluster), nothing: each map sends ``shared`` to the workers itself."""
        return contextlib.nullcontext()

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
        self._session: tuple[Any, str, Any] | None = None  # (shared, start method, pool)

    @contextlib.contextmanager
    def session(self, shared: Any, *, start_method: str = "fork") -> Iterator[None]:
        if self.workers <= 1 or self._session is not None:
            yield
            return
        with mp.get_context(start_method).Pool(
            self.workers, initializer=_init_worker, initargs=(shared,)
        ) as pool:
            self._session = (shared, start_method, pool)
            try:
                yield
            finally:
                self._session = None

    def describe(self) -> str:
        return "local serial" if self.workers == 1 else f"local process pool ({self.workers} processes)"

    def stream(
        self, fn: Callable[[T, Any], R], items: Iterable[T], *, desc: str = "work", start_method: str = "fork"
    ) -> Iterator[R]:
        if self.workers <= 1:
            return (fn(item, None) for item in items)
        return self._stream(fn, items, start_method)

    def _stream(self, fn: Callable[[T, Any], R], items: Iterable[T], start_method: str) -> Iterator[R]:
        # Pool.imap takes the items from its own thread as the workers ask for them: the items'
        # maker (the extract's reading) runs beside the workers instead of before them.
        with mp.get_context(start_method).Pool(self.workers) as pool:
            yield from pool.imap(_call, ((fn, item) for item in items), chunksize=1)

    def map(
        self,
        fn: Callable[[T, Any], R],
        items: Iterable[T],
        *,
        shared: Any = None,
        desc: str = "work",
        unit: str = "shard",
        progress: Progress = False,
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
        live = self._session
        if live is not None and live[0] is shared and live[1] == start_method:
            yield from self._imap(live[2], fn, items, total, desc, unit, progress, weights)
            return
        ctx = mp.get_context(start_method)
        # The pool is started before the progress bar, whose monitor thread a fork must not find.
        with ctx.Pool(jobs, initializer=_init_worker, initargs=(shared,)) as pool:
            yield from self._imap(pool, fn, items, total, desc, unit, progress, weights)

    @staticmethod
    def _imap(pool, fn, items, total, desc, unit, progress, weights) -> Iterator:
        # imap keeps the items' order; one item per dispatch since shards are already
        # batches (render) or uneven (build), and the last ones should not queue behind a slow one.
        with progress_bar(total, desc, unit, progress) as bar:
            jobs_ = ((fn, item) for item in items)
            for i, r in enumerate(pool.imap(_call, jobs_, chunksize=1)):
                bar.update(weights[i] if weights else 1)
                yield r
