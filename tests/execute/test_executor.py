"""The executor interface: local serial, local process pool and Dask give the same results in
the items' order, share one value per worker, and raise a shard's error as itself."""

from __future__ import annotations

import os
import subprocess

import pytest

from scoring.errors import InputError
from scoring.execute import LocalExecutor, open_executor
from tests.conftest import REPO, VENV_BIN


def _busy(n: int, shared: dict) -> tuple[int, int, int]:
    # Uneven work (later items finish first on two workers) without sleeping.
    x = 0
    for i in range((10 - n) * 20_000):
        x = (x + i) % 7
    return n, shared["base"] + n, os.getpid()


def _fail_on_three(n: int, shared: object) -> int:
    if n == 3:
        raise InputError(f"shard {n}: bad input")
    return n


ITEMS = list(range(10))
EXPECTED = [(n, 100 + n) for n in ITEMS]


@pytest.mark.parametrize("jobs", [1, 2])
def test_local_results_in_order_with_the_shared_value(jobs):
    out = list(LocalExecutor(jobs).map(_busy, ITEMS, shared={"base": 100}))
    assert [(n, v) for n, v, _ in out] == EXPECTED
    pids = {pid for _, _, pid in out}
    assert (pids == {os.getpid()}) if jobs == 1 else (os.getpid() not in pids)


def test_maps_in_a_session_share_its_workers():
    # the build's rounds run on one pool: what a worker cached in a round stays for the next
    ex, shared = LocalExecutor(2), {"base": 100}
    with ex.session(shared):
        first = list(ex.map(_busy, ITEMS, shared=shared))
        second = list(ex.map(_busy, ITEMS, shared=shared))
        other = list(ex.map(_busy, ITEMS, shared={"base": 0}))  # another value: its own pool
    assert [(n, v) for n, v, _ in first] == [(n, v) for n, v, _ in second] == EXPECTED
    assert [v for _, v, _ in other] == ITEMS
    session = {pid for _, _, pid in first + second}
    assert len(session) <= 2 and os.getpid() not in session
    assert not session & {pid for _, _, pid in other}
    apart = [{pid for _, _, pid in ex.map(_busy, ITEMS, shared=shared)} for _ in range(2)]
    assert not apart[0] & apart[1]  # outside a session, each map starts its own workers


@pytest.mark.parametrize("jobs", [1, 2])
def test_local_error_is_raised_as_itself(jobs):
    with pytest.raises(InputError, match="shard 3: bad input"):
        list(LocalExecutor(jobs).map(_fail_on_three, ITEMS))


def test_dask_same_results_in_order_on_two_workers(dask_cluster):
    with open_executor(scheduler=dask_cluster.address, quiet=True) as ex:
        assert ex.distributed and ex.workers == 2 and ex.address == dask_cluster.address
        out = list(ex.map(_busy, ITEMS, shared={"base": 100}, desc="order"))
        with pytest.raises(InputError, match="shard 3: bad input"):
            list(ex.map(_fail_on_three, ITEMS, desc="fail"))
    assert [(n, v) for n, v, _ in out] == EXPECTED
    assert os.getpid() not in {pid for _, _, pid in out}
    # the client was closed with the executor; the cluster itself is not ours to stop
    assert all(p.poll() is None for p in dask_cluster.procs)


def test_unreachable_scheduler_is_a_one_line_error(tmp_path):
    r = subprocess.run(
        [
            str(VENV_BIN / "spatialgap"),
            "build",
            "--out",
            str(tmp_path / "b"),
            "--scheduler",
            "tcp://127.0.0.1:9",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr
    assert "--scheduler tcp://127.0.0.1:9: cannot connect" in r.stderr
    assert not (tmp_path / "b").exists()


def test_bad_worker_count_and_exclusive_flags(tmp_path):
    base = [str(VENV_BIN / "spatialgap"), "build", "--out", str(tmp_path / "b")]
    r = subprocess.run([*base, "--dask-workers", "0"], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert r.returncode != 0 and "--dask-workers must be at least 1" in r.stderr
    r = subprocess.run(
        [*base, "--dask-workers", "2", "--scheduler", "tcp://x:1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2 and "not allowed with argument" in r.stderr
