"""Two runs on two Dask workers against one endpoint configured for 2 requests in flight: the
endpoint never sees more than 2 at once (a distributed semaphore per endpoint), and both runs
journal every sample."""

from __future__ import annotations

import json
import sys

from scoring.evaluate.cluster import RunJob, run_job
from scoring.execute import open_executor
from scoring.formats.rundir import final_predictions
from scoring.runner.config import ModelSpec
from tests.conftest import REPO

sys.path.insert(0, str(REPO / "tests" / "runner"))  # the runner tests' fake endpoint and benchmark
from fakeserver import FaultServer
from runner_helpers import make_bench


def test_endpoint_concurrency_holds_across_the_cluster(dask_cluster, tmp_path):
    srv = FaultServer(latency=0.05).start()
    try:
        bench = make_bench(tmp_path / "bench", n_qa=12, n_edit=0, maps=False)
        spec = ModelSpec.from_endpoint(srv.url("ok"), "fake-model", concurrency=2)
        jobs = [RunJob(str(bench), spec, "geojson", "qa", str(tmp_path / f"run{i}"), None) for i in (1, 2)]
        with open_executor(scheduler=dask_cluster.address, quiet=True) as ex:
            summaries = list(ex.map(run_job, jobs, desc="limit"))
    finally:
        srv.stop()
    assert [s["ok"] for s in summaries] == [24, 24], summaries
    manifests = [json.loads((tmp_path / f"run{i}" / "manifest.json").read_text()) for i in (1, 2)]
    assert len({m["sessions"][0]["pid"] for m in manifests}) == 2  # one run on each worker, together
    assert 1 <= srv.max_in_flight <= 2
    for i in (1, 2):
        assert len(final_predictions(tmp_path / f"run{i}" / "predictions.jsonl")) == 24


def test_the_fake_endpoint_counts_a_request_open_only_until_its_last_byte(tmp_path):
    """The count the test above relies on: a handler held after its reply was delivered (as a
    thread the OS does not run again at once) no longer counts, so a client limited to 2 in
    flight is seen with at most 2, strictly, however late the handlers return."""
    srv = FaultServer().start()
    srv.hold_after_reply = True  # each handler returns only after the next request was counted
    srv.pair_up = 12  # and two requests are always open together
    try:
        bench = make_bench(tmp_path / "bench", n_qa=6, n_edit=0, maps=False)
        spec = ModelSpec.from_endpoint(srv.url("ok"), "fake-model", concurrency=2)
        from scoring.runner.run import run_benchmark

        summary = run_benchmark(bench, spec, "geojson", "qa", None, tmp_path / "run", progress=False)
    finally:
        srv.stop()
    assert summary.ok == 12
    assert srv.max_in_flight == 2  # a held handler counted until it returned: 3 and more
