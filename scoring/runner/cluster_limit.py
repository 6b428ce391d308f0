"""A cluster-wide in-flight limit per endpoint, used only inside a Dask worker.

Each run keeps its own AdaptiveLimiter (halved on 429, raised again after successes); on a Dask
worker a request also holds a lease of a `distributed.Semaphore` named after the endpoint and
model, with the configured `concurrency` as its size: however many runs and workers send to one
endpoint, at most `concurrency` requests are in flight to it. A dead worker's leases expire on the
scheduler (distributed.scheduler.locks.lease-timeout), so a killed worker never starves the rest.
"""

from __future__ import annotations

import asyncio
import math
import sys

from scoring.runner.client import AdaptiveLimiter
from scoring.runner.config import ModelSpec, public_url


def semaphore_name(spec: ModelSpec) -> str:
    # public_url: the name is visible on the scheduler and its dashboard, so never a secret
    return f"spatialgap-endpoint:{public_url(spec.base_url)}#{spec.model}"


class ClusterLimiter(AdaptiveLimiter):
    def __init__(self, maximum: int, name: str):
        from distributed import Semaphore

        super().__init__(maximum)
        self.name = name
        self.semaphore = Semaphore(max_leases=self.maximum, name=name)

    async def acquire(self, budget: float = math.inf) -> float:
        waited = await super().acquire(budget)
        try:
            # The semaphore's calls are blocking round-trips to the scheduler: off the run's loop.
            # Not bounded by the sample's budget: other runs' requests queue here, not rate limits.
            await asyncio.to_thread(self.semaphore.acquire)
        except BaseException:
            await super().release()
            raise
        return waited

    async def release(self) -> None:
        try:
            await asyncio.to_thread(self.semaphore.release)
        finally:
            await super().release()


def in_dask_worker() -> bool:
    if "distributed" not in sys.modules:  # a local run never imports dask
        return False
    from distributed import get_worker

    try:
        get_worker()
    except ValueError:
        return False
    return True


def endpoint_limiter(spec: ModelSpec) -> AdaptiveLimiter:
    """The limiter of one run: cluster-wide on a Dask worker, the run's own everywhere else."""
    if in_dask_worker():
        return ClusterLimiter(spec.concurrency, semaphore_name(spec))
    return AdaptiveLimiter(spec.concurrency)
