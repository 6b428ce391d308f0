"""The command-line side of the execution layer: ``--scheduler`` / ``--dask-workers`` and the
executor a command runs its shards on."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from scoring.errors import InputError
from scoring.execute.base import Executor, LocalExecutor


def add_executor_args(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run the shards on this Dask scheduler (e.g. tcp://host:8786); files are written here",
    )
    g.add_argument(
        "--dask-workers",
        type=int,
        metavar="N",
        help="start a local Dask cluster of N worker processes for this command",
    )


def say(msg: str) -> None:
    print(f"[execute] {msg}", file=sys.stderr, flush=True)


@contextmanager
def open_executor(
    jobs: int | None = None,
    scheduler: str | None = None,
    dask_workers: int | None = None,
    quiet: bool = False,
) -> Iterator[Executor]:
    """The executor for a command: Dask when a scheduler or a worker count is given, else the
    local one with ``jobs`` processes. Closed (cluster and all) when the command ends."""
    if dask_workers is not None and dask_workers < 1:
        raise InputError(f"--dask-workers must be at least 1 (got {dask_workers})")
    if scheduler is not None and not scheduler.strip():
        raise InputError("--scheduler: give an address such as tcp://host:8786")
    ex: Executor
    if scheduler or dask_workers:
        from scoring.execute.on_dask import DaskExecutor

        ex = DaskExecutor(scheduler, dask_workers)
        if not quiet:
            say(f"running on the {ex.describe()}")
            if ex.dashboard:
                say(f"dashboard: {ex.dashboard}")
    else:
        ex = LocalExecutor(jobs)
    try:
        yield ex
    finally:
        ex.close()


def executor_from_args(args: argparse.Namespace, jobs: int | None = None, quiet: bool = False):
    """`open_executor` for a parsed command line (``--scheduler``, ``--dask-workers``)."""
    return open_executor(
        jobs, getattr(args, "scheduler", None), getattr(args, "dask_workers", None), quiet=quiet
    )
