"""Map sets (scoring/render/multi.py) go through the stage's executor: on a real Dask LocalCluster
(a scheduler and two worker processes, as `--dask-workers 2` starts) every drawing task runs on a
worker process, and the files are the bytes of a local serial run."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("distributed")
from distributed import get_task_stream  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "render"))
from render_synthetic import make_bench  # noqa: E402

from scoring.execute.on_dask import DaskExecutor  # noqa: E402
from scoring.render.multi import render_map_sets  # noqa: E402

SETS = ["image-multi", "image-context"]


def files_of(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def test_map_sets_run_on_the_cluster_workers_with_the_local_bytes(tmp_path):
    local = make_bench(tmp_path / "local" / "helsinki")
    remote = tmp_path / "dask" / "helsinki"
    shutil.copytree(local, remote)
    render_map_sets(local, SETS, jobs=1)

    with DaskExecutor(n_workers=2) as ex:
        workers = ex.client.scheduler_info()["workers"]
        pids = ex.client.run(os.getpid)
        with get_task_stream(ex.client) as stream:
            summary = render_map_sets(remote, SETS, executor=ex)
        ran = [t for t in stream.data if str(t["key"]).startswith("map sets")]

    assert summary.sets == {"image-multi": 7, "image-context": 7}
    # each batch was a task run by a worker process of the cluster, not by this one
    assert len(ran) >= 2 and {t["worker"] for t in ran} <= set(workers)
    assert len(pids) == 2 and os.getpid() not in pids.values()
    lmaps, rmaps = files_of(local / "maps"), files_of(remote / "maps")
    assert len(lmaps) > 14 and lmaps.keys() == rmaps.keys()
    assert [k for k in lmaps if lmaps[k] != rmaps[k]] == []
    assert any(k.endswith(".png") for k in lmaps)
