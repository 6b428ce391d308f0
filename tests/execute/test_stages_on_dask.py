"""build and render through a real `dask scheduler` with two `dask worker` processes give the
same bytes as a local run."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO, VENV_BIN, shared_path

# The two smallest shared extracts; a few relations keep the test short.
CITIES = ["paris_marais_roads.osm.pbf", "baltimore.osm.pbf"]
RELATIONS = ["D02", "O06", "M18"]


def sg(*args: str) -> subprocess.CompletedProcess:
    r = subprocess.run(
        [str(VENV_BIN / "spatialgap"), *args], capture_output=True, text=True, cwd=REPO, timeout=600
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return r


def manifest_without_timing(bench: Path) -> dict:
    """The manifest minus what measures this machine (seconds), which no two runs share."""
    m = json.loads((bench / "manifest.json").read_text())
    m.pop("timing", None)
    for r in m["build_report"]:
        r.pop("seconds", None)
    return m


def files_of(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


@pytest.mark.shared
def test_build_and_render_on_the_cluster_give_the_local_bytes(dask_cluster, tmp_path):
    built = []
    for name in CITIES:
        src = shared_path("osm", name)
        local, remote = tmp_path / f"local-{name}", tmp_path / f"dask-{name}"
        common = ["--osm", str(src), "--relations", *RELATIONS, "--qa", "2", "--edit", "1", "--no-render"]
        sg("build", *common, "--out", str(local), "--jobs", "1", "--no-progress")
        r = sg("build", *common, "--out", str(remote), "--scheduler", dask_cluster.address)
        assert f"Dask scheduler {dask_cluster.address} (2 workers)" in r.stderr
        # no progress frames: stderr is no terminal here (frames only on a terminal, #32)
        for f in ("qa.jsonl", "edit.jsonl", "context.geojsonl", "build_report.md"):
            assert (local / f).read_bytes() == (remote / f).read_bytes(), (name, f)
        assert manifest_without_timing(local) == manifest_without_timing(remote)
        assert json.loads((remote / "qa.jsonl").read_text().splitlines()[0])["id"]
        built.append((local, remote))

    # Maps of one city: drawn by the two workers, written by the client, same bytes as local.
    local, remote = built[0]
    sg("render", "--bench", str(local), "--jobs", "1", "--no-progress")
    sg("render", "--bench", str(remote), "--scheduler", dask_cluster.address, "--no-progress")
    lmaps, rmaps = files_of(local / "maps"), files_of(remote / "maps")
    n_instances = sum(1 for f in ("qa.jsonl", "edit.jsonl") for _ in (local / f).open())
    assert len(lmaps) == 4 * n_instances + 1 and lmaps.keys() == rmaps.keys()  # + maps.json
    assert [k for k in lmaps if lmaps[k] != rmaps[k]] == []
    # workers wrote nothing of the output: no file appeared in their own directories
    for w in dask_cluster.workers:
        assert not list((dask_cluster.tmp / w).rglob("*.png"))

    # Map sets (render/multi.py) run on the same executor: on the cluster, the local bytes.
    sets = ["--modalities", "image-multi,image-context", "--no-progress"]
    sg("render", "--bench", str(local), "--jobs", "1", *sets)
    r = sg("render", "--bench", str(remote), "--scheduler", dask_cluster.address, *sets)
    assert "map sets into" in r.stdout
    lmaps, rmaps = files_of(local / "maps"), files_of(remote / "maps")
    assert len(lmaps) > 4 * n_instances and lmaps.keys() == rmaps.keys()
    assert [k for k in lmaps if lmaps[k] != rmaps[k]] == []
    for w in dask_cluster.workers:
        assert not list((dask_cluster.tmp / w).rglob("*.png"))
