"""Settings of a process the package owns whole (a command line, a served agent, a pool worker),
never of one it shares (QGIS, a caller of the library)."""

from __future__ import annotations

import contextlib
import ctypes
import gc
import importlib
import os
import signal
import threading
from collections.abc import Iterator
from typing import Any

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's malloc.h


def keep_freed_memory() -> None:
    """Keep the memory of freed large buffers in this process (glibc). Maps, their data URLs and
    the request bodies carrying them are half-megabyte to 7 MB buffers made and freed per map or
    request; glibc gave them back to the kernel when freed and the next one faulted the pages in
    again (some 140 page faults per map request). A no-op where the C library is not glibc."""
    try:
        libc = ctypes.CDLL(None)
        libc.mallopt(_M_TRIM_THRESHOLD, 128 << 20)
        libc.mallopt(_M_MMAP_THRESHOLD, 16 << 20)
    except (OSError, AttributeError):
        pass


def lower_priority(niceness: int) -> None:
    """Yield the cores to the other processes of a job (a pool initializer: this module is light
    to import in a spawned worker), collecting cycles less often as its results pile up. The
    niceness is a no-op where processes have none."""
    if hasattr(os, "nice"):
        os.nice(niceness)
    fewer_collections()


def preload(module: str) -> None:
    """Import ``module`` now (a spawned worker's first task while its parent is still starting up:
    the import then costs no time when the first real task comes)."""
    importlib.import_module(module)


def call(module: str, name: str, *args: Any) -> Any:
    """``module.name(*args)``: a task for a worker whose parent has not imported ``module`` (the
    sweep's scorer, started before the sweep loads the scorer).

    >>> call("math", "hypot", 3.0, 4.0)
    5.0
    """
    return getattr(importlib.import_module(module), name)(*args)


# Thread pools of the numerical libraries a command's process loads (OpenBLAS, OpenMP, MKL).
_BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def one_blas_thread() -> None:
    """One BLAS thread in this process and the ones it starts, unless the user chose otherwise.
    A command's parallelism is its processes (build and render pools, agents, scorer): the BLAS
    calls made here are small (bootstrap counts, affine transforms), and OpenBLAS's extra threads
    spin after each one, burning a core for nothing (2 CPU-s of the main job's last 4 s). Must
    run before numpy is imported."""
    for name in _BLAS_THREADS:
        os.environ.setdefault(name, "1")


def fewer_collections() -> None:
    """Run the cycle collector less often. A sweep's process holds its benchmarks and journals
    (millions of objects) for minutes while each request allocates thousands of short-lived
    containers: at the default thresholds the collector ran some 1,600 times and walked
    everything 11 times (1.9 CPU-s of a sweep's client); at these, 80 times and 0 to 1 (0.35 s).
    The containers are freed by reference counting, so memory stays bounded."""
    gc.set_threshold(10_000, 20, 20)


def sigterm_as_ctrl_c() -> None:
    """SIGTERM (a cluster scheduler, ``timeout``, ``kill``) ends the command as Ctrl-C does:
    journals closed, the run manifest saying "interrupted", children ended. Main thread only."""
    if threading.current_thread() is not threading.main_thread():
        return
    global _sigterm_owner
    first = not _sigterm_owner
    _sigterm_owner = os.getpid()
    signal.signal(signal.SIGTERM, _on_sigterm)
    if not first:
        return
    # A forked pool worker must keep SIGTERM's default action: its pool ends it with SIGTERM, and
    # a Python-level handler never runs while the worker waits in C code (it would hang its join).
    os.register_at_fork(after_in_child=_default_sigterm)


def _default_sigterm() -> None:
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    except ValueError:  # forked from another thread than the main one: it keeps the handler
        pass


_sigterm_owner = 0  # the command's process: a forked pool worker inherits the handler, not the role


def _on_sigterm(signum: int, frame: Any) -> None:
    if os.getpid() != _sigterm_owner:
        # a forked worker being terminated by its pool: die as SIGTERM kills, without a word
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        return
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler) and handler is not signal.default_int_handler:
        # asyncio's runner handles SIGINT itself (it cancels its task, then raises
        # KeyboardInterrupt): going through it ends a run exactly as a Ctrl-C does.
        signal.raise_signal(signal.SIGINT)
        return
    raise KeyboardInterrupt


@contextlib.contextmanager
def ctrl_c_ignored() -> Iterator[None]:
    """Processes started inside ignore SIGINT for their whole life (an ignored signal stays
    ignored through exec, and Python keeps it so): Ctrl-C reaches the whole terminal's process
    group, and a pool worker then printed a KeyboardInterrupt traceback of its own; the parent
    ends its workers instead. A no-op outside the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def scorer_worker_init(niceness: int) -> None:
    """A background pool worker's initializer: Ctrl-C is its parent's to handle (see
    ctrl_c_ignored), and it yields the cores (lower_priority)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    lower_priority(niceness)


def quiet_resource_tracker() -> None:
    """Start multiprocessing's resource tracker now, with its stderr on /dev/null.

    The tracker outlives the command by a moment and unlinks what spawned pools left behind; after
    a Ctrl-C that interrupted a pool mid-way, it then warned ("resource_tracker: ... No such file
    or directory") below the command's last line. It still cleans up; it no longer writes to the
    user's terminal. Started before any spawn-context pool, which would start it loud.

    The warning's cause after a Ctrl-C, the early scorer's pool threads running into the exit, is
    gone (EarlyScorer.close joins them); this stays for a command killed while it closes its pools
    (a second Ctrl-C, SIGKILL), where the tracker's clean-up is right and its warning only noise."""
    from multiprocessing import resource_tracker

    if getattr(resource_tracker._resource_tracker, "_fd", None) is not None:
        return  # already running (its stderr is whatever it was started with)
    saved, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        resource_tracker.ensure_running()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)
