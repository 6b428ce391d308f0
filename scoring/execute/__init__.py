"""One execution layer for every stage: shards of pure work mapped over local processes or a
Dask cluster, results handed back to the caller in input order (so files never depend on which
worker finished first) and written by the caller.

    LocalExecutor(jobs)           serial (jobs=1) or a process pool: what the stages do by default
    DaskExecutor(address | n)     an existing scheduler (--scheduler) or a LocalCluster (--dask-workers)

A stage calls ``executor.map(fn, items, shared=value)``; ``fn(item, shared)`` runs on a worker,
``shared`` (feature pools, a map context...) is sent once per worker, not once per shard.
dask is imported only by DaskExecutor: a local run never loads it.
"""

from scoring.execute.base import Executor, LocalExecutor
from scoring.execute.cli import add_executor_args, executor_from_args, open_executor

__all__ = ["Executor", "LocalExecutor", "add_executor_args", "executor_from_args", "open_executor"]
