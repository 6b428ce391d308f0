"""Issue 33: the context layer is serialised in chunks on the build's executor; joined in order,
the chunks are the one-pass file byte for byte, whatever the chunk size."""

from __future__ import annotations

import json

import pytest

from scoring.build.builder import build_benchmark, dumps
from scoring.build.context import context_chunks, context_features, context_lines
from scoring.extract.osm import load_pools


@pytest.fixture(scope="module")
def pools():
    return load_pools(None)


@pytest.mark.parametrize("chunk", [1, 7, 1000, 10**9])
def test_chunks_joined_are_the_one_pass_file(pools, chunk):
    whole = "".join(dumps(f) + "\n" for f in context_features(pools))
    jobs = context_chunks(pools, chunk)
    assert all(sum(hi - lo for _, _, lo, hi in job) <= chunk for job in jobs)
    assert "".join(context_lines(job, pools) for job in jobs) == whole
    water = {f.uid for f in pools.context["water"]}
    # each feature once: water first, then the four pools, an area that is water written as water
    expected = len(water) + sum(len(pools.features[k]) for k in ("building", "road", "poi"))
    expected += sum(1 for f in pools.features["area"] if f.uid not in water)
    assert whole.count("\n") == expected


def test_two_workers_write_the_file_one_process_writes(tmp_path):
    kw = {"n_qa": 1, "n_edit": 1, "relations": ["T04", "M01"], "progress": False}
    a = build_benchmark(None, tmp_path / "a", jobs=2, **kw)
    b = build_benchmark(None, tmp_path / "b", jobs=1, **kw)
    assert a["files"]["context.geojsonl"] == b["files"]["context.geojsonl"]
    first = json.loads((tmp_path / "a" / "context.geojsonl").read_text().splitlines()[0])
    assert first["properties"]["pool"] == "water"
