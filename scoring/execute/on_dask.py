"""The Dask implementation: an existing scheduler (``--scheduler ADDRESS``) or a LocalCluster of
worker processes started for one command (``--dask-workers N``).

Every shard is one task; results come back to the client, which yields them in the items' order
(files never depend on which worker finished first) and writes them. A task whose worker dies is
re-run by the scheduler on another worker: shards are pure, so a re-run gives the same bytes.
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from scoring.errors import InputError
from scoring.execute.base import Executor, Progress, progress_bar

T = TypeVar("T")
R = TypeVar("R")

CONNECT_TIMEOUT_S = 10  # a scheduler that does not answer within this is reported, not waited for
WORKERS_TIMEOUT_S = 120  # for a scheduler with no worker yet (workers still starting)


def code_identity() -> str:
    """SHA-256 over the scoring package's version and Python sources, as this process sees them."""
    import scoring

    root = Path(scoring.__file__).parent
    h = hashlib.sha256(scoring.__version__.encode())
    for p in sorted(root.rglob("*.py")):
        h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


class DaskExecutor(Executor):
    name = "dask"
    distributed = True

    def __init__(self, address: str | None = None, n_workers: int | None = None):
        from distributed import Client, LocalCluster

        # The cluster's own chatter (a LocalCluster's scheduler lives in this process) would drown
        # the command's output; warnings still show.
        logging.getLogger("distributed").setLevel(logging.WARNING)
        self.cluster = None
        if address:
            try:
                self.client = Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
            except (OSError, TimeoutError, ValueError) as exc:
                raise InputError(f"--scheduler {address}: cannot connect ({type(exc).__name__})") from None
        else:
            n = max(1, int(n_workers or 1))
            # One thread per worker process: shards are CPU-bound Python (the GIL), so a
            # process is the unit of parallelism, as in the local pool.
            self.cluster = LocalCluster(
                n_workers=n,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address="127.0.0.1:0",
                silence_logs=logging.ERROR,
            )
            self.client = Client(self.cluster, set_as_default=False)
        try:
            self.client.wait_for_workers(1, timeout=WORKERS_TIMEOUT_S)
        except (OSError, TimeoutError) as exc:
            self.close()
            raise InputError(
                f"{address or 'local cluster'}: no Dask worker joined within {WORKERS_TIMEOUT_S} s "
                f"({type(exc).__name__})"
            ) from None
        self._check_code()
        info = self.client.scheduler_info()
        self.address = str(self.cluster.scheduler_address if self.cluster is not None else address)
        self.workers = len(info.get("workers", {}))
        self.dashboard = self.client.dashboard_link if "dashboard" in info.get("services", {}) else None

    def _check_code(self) -> None:
        """Identical bytes need identical code: refuse workers running another spatialgap."""
        try:
            theirs = self.client.run(code_identity)
        except Exception as exc:  # a worker without the package cannot even load the check
            self.close()
            raise InputError(f"Dask workers cannot run spatialgap ({type(exc).__name__}: {exc})") from None
        other = sorted(addr for addr, h in theirs.items() if h != code_identity())
        if other:
            self.close()
            raise InputError(
                f"{len(other)} Dask worker(s) run other spatialgap code than this command (first: "
                f"{other[0]}); start them from the same checkout and venv"
            )

    def describe(self) -> str:
        where = "local Dask cluster" if self.cluster is not None else "Dask scheduler"
        return f"{where} {self.address} ({self.workers} worker{'s' if self.workers != 1 else ''})"

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
        from distributed import as_completed

        items = list(items)
        bar = progress_bar(sum(weights) if weights else len(items), desc, unit, progress)
        token = uuid.uuid4().hex[:10]
        # Sent once to every worker, not once per shard (feature pools, a map context); in a
        # list, since scatter would send a dict's or a list's values one by one.
        shared_f = None
        if shared is not None:
            shared_f = self.client.scatter([shared], broadcast=True, hash=False)[0]
        futures = [
            self.client.submit(fn, item, shared_f, key=f"{desc}-{token}-{i}", pure=False)
            for i, item in enumerate(items)
        ]
        index = {f.key: i for i, f in enumerate(futures)}
        done: dict[int, R] = {}
        next_i = 0
        try:
            for f in as_completed(futures, loop=self.client.loop):
                i = index[f.key]
                done[i] = f.result()  # a task's exception is raised here, as itself
                f.release()
                bar.update(weights[i] if weights else 1)
                bar.set_postfix(workers=len(self.client.scheduler_info().get("workers", {})), refresh=False)
                while next_i in done:
                    yield done.pop(next_i)
                    next_i += 1
        finally:
            pending = [f for f in futures if not f.done()]
            if pending:
                self.client.cancel(pending)
            if shared_f is not None:
                shared_f.release()
            bar.close()

    def close(self) -> None:
        client = getattr(self, "client", None)
        if client is not None and client.status != "closed":
            client.close()
        if self.cluster is not None:
            self.cluster.close()
            self.cluster = None
