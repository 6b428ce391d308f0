"""A real Dask cluster on 127.0.0.1 for tests: a `dask scheduler` and worker processes started
with the `dask` command of the venv, exactly as the README tells a user to."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from tests.conftest import REPO, VENV_BIN

START_S = 90.0  # for the scheduler file and the workers to appear (2 busy cores)


def _wait(condition, what: str, procs: list[subprocess.Popen], deadline_s: float = START_S):
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        dead = [p.args for p in procs if p.poll() is not None]
        assert not dead, f"{dead[0]} exited while waiting for {what}"
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class DaskCluster:
    def __init__(self, tmp: Path, n_workers: int = 2):
        self.tmp = tmp
        tmp.mkdir(parents=True, exist_ok=True)
        self.procs: list[subprocess.Popen] = []
        self.workers: dict[str, subprocess.Popen] = {}
        sched_file = tmp / "scheduler.json"
        self._start(
            "scheduler",
            "scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--no-dashboard",
            "--scheduler-file",
            str(sched_file),
        )
        self.address = _wait(
            lambda: sched_file.is_file() and json.loads(sched_file.read_text() or "{}").get("address"),
            "the scheduler file",
            self.procs,
        )
        for i in range(n_workers):
            name = f"w{i}"
            self.workers[name] = self._start(
                name,
                "worker",
                self.address,
                "--nthreads",
                "1",
                "--no-nanny",  # a killed worker stays dead: the test sees the rest finish the job
                "--no-dashboard",
                "--name",
                name,
                "--host",
                "127.0.0.1",
                "--local-directory",
                str(tmp / name),
            )
        from distributed import Client

        self.client = Client(self.address, timeout=30, set_as_default=False)
        self.client.wait_for_workers(n_workers, timeout=START_S)

    def _start(self, log: str, *args: str) -> subprocess.Popen:
        out = open(self.tmp / f"{log}.log", "wb")
        # PYTHONPATH: tasks defined in test modules are pickled by reference (tests.execute...)
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        # a killed worker's endpoint leases expire in seconds instead of the default 30 s
        env["DASK_DISTRIBUTED__SCHEDULER__LOCKS__LEASE_TIMEOUT"] = "4s"
        env["DASK_DISTRIBUTED__SCHEDULER__LOCKS__LEASE_VALIDATION_INTERVAL"] = "1s"
        p = subprocess.Popen(
            [str(VENV_BIN / "dask"), *args], cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT
        )
        out.close()
        self.procs.append(p)
        return p

    def names_processing(self, prefix: str) -> list[str]:
        """Names of the workers running a task whose key starts with ``prefix``."""
        info = self.client.scheduler_info()["workers"]
        busy = self.client.processing()
        return [
            str(info[addr]["name"])
            for addr, keys in busy.items()
            if addr in info and any(str(k).startswith(prefix) for k in keys)
        ]

    def close(self) -> None:
        self.client.close()
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
