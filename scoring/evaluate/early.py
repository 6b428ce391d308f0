"""Each run scored as soon as it finishes, in one low-priority process, while the sweep's other
runs and the render (its critical path) go on: the sweep's last stretch then only assembles the
tables instead of scoring every run on one core."""

from __future__ import annotations

import multiprocessing as mp
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

from scoring.evaluate.timing import reaped_cpu
from scoring.support.process import call, ctrl_c_ignored, preload, scorer_worker_init

NICENESS = 10  # the scorer yields the cores to the render and the agents while they work
CLOSE_S = 10.0  # for an idle worker to take its stop sentinel and exit before it is terminated
# Named, not imported: the sweep's command starts this scorer before it loads the scorer itself.
SCORER = ("scoring.score.results", "score_run_dir")


class EarlyScorer:
    def __init__(self, only_recorded: bool):
        self.only_recorded = only_recorded
        # spawn, not fork: the sweep's process runs threads (agent start-up, the event loop's pool).
        # The worker imports only the scorer (its initializer lives in a light module), and starts
        # now: created before the build, it loads while a core is still partly idle.
        self._pool = ProcessPoolExecutor(
            1, mp_context=mp.get_context("spawn"), initializer=scorer_worker_init, initargs=(NICENESS,)
        )
        with ctrl_c_ignored():  # the first submit spawns the worker: it inherits SIGINT ignored
            self._pool.submit(preload, SCORER[0])
        self._futures: dict[str, Future] = {}
        self.cpu_seconds: float | None = None  # its worker's, once closed

    def submit(self, bench: Path, run_dir: Path) -> None:
        self._futures[str(run_dir)] = self._pool.submit(
            call, *SCORER, str(bench), str(run_dir), self.only_recorded
        )

    def results(self) -> dict[str, tuple]:
        """run dir -> (journal fingerprint, rows) of the runs scored; those not started are
        cancelled and those that failed left out: `score_runs` scores them (and reports an error)."""
        out = {}
        for run_dir, fut in self._futures.items():
            if fut.cancel():
                continue
            try:
                out[run_dir] = fut.result()
            except Exception:  # noqa: BLE001 - scored again where its error is reported
                continue
        return out

    def close(self, abandon: bool = False) -> None:
        """Shut the pool down and end its worker before returning; ``abandon``: the sweep is
        ending on an error or Ctrl-C, so the run being scored is dropped too.

        Never left to the interpreter's exit: multiprocessing's exit handler closes the pool's
        call queue and then joins the worker, which, if the pool's stop sentinel had not reached
        it yet, waits on that queue forever (`evaluate` hung after "nothing to score")."""
        processes = list((getattr(self._pool, "_processes", None) or {}).values())
        # Taken before shutdown(wait=False), which forgets it: a later shutdown(wait=True) then
        # joins nothing.
        manager = getattr(self._pool, "_executor_manager_thread", None)
        self._pool.shutdown(wait=False, cancel_futures=True)
        before = reaped_cpu()
        for p in processes:
            if not abandon:
                p.join(CLOSE_S)  # idle (every result was read): it takes the sentinel and exits
            if p.is_alive():
                p.terminate()
            p.join()
        self.cpu_seconds = reaped_cpu() - before if processes else None
        # and the pool's manager thread, which joins the call queue's feeder thread: left running
        # into the exit, the last of them to drop the queue unlinked its semaphore and was cut
        # off by the exit before telling the resource tracker ("leaked semaphore ... No such file
        # or directory" after a Ctrl-C, 2 runs in 30). Joined, the queues are freed in this thread.
        if manager is not None:
            manager.join()
