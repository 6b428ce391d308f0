"""Issue 33: the context layer is serialised in chunks on the build's executor; joined in order,
the chunks are the one-pass file byte for byte, whatever the chunk size; only the context within
reach of the instances' maps is kept."""

from __future__ import annotations

import json

import pytest

from scoring.build.builder import build_benchmark
from scoring.build.context import (
    context_chunks,
    context_features,
    context_lines,
    join_selections,
    near_instances,
    reach_box,
)
from scoring.build.shards import dumps
from scoring.extract.osm import load_pools


@pytest.fixture(scope="module")
def pools():
    return load_pools(None)


@pytest.mark.parametrize("chunk", [1, 7, 1000, 10**9])
def test_chunks_joined_are_the_one_pass_file(pools, chunk):
    whole = "".join(dumps(f) + "\n" for f in context_features(pools))
    jobs = context_chunks(pools, chunk=chunk)
    assert all(sum(len(picked) for _, _, picked in job) <= chunk for job in jobs)
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


def test_only_the_context_near_the_instances_is_kept(pools, tmp_path):
    """One instance: the file holds exactly the features crossing its reach square, in the
    whole file's order."""
    import shapely

    kw = {"n_qa": 1, "n_edit": 0, "relations": ["M01"], "progress": False, "unanswerable_share": 0}
    build_benchmark(None, tmp_path / "one", jobs=1, **kw)
    inst = json.loads((tmp_path / "one" / "qa.jsonl").read_text().splitlines()[0])
    kept = (tmp_path / "one" / "context.geojsonl").read_text().splitlines()
    box = shapely.box(*reach_box(inst))
    whole = [dumps(f) for f in context_features(pools)]
    near = [line for line, f in zip(whole, context_features(pools), strict=False) if box.intersects(_geom(f))]
    assert kept == near and 0 < len(kept) < len(whole)
    selection = join_selections(pools, [near_instances(pools, [inst])])
    assert "".join(context_lines(job, pools) for job in context_chunks(pools, selection)) == "".join(
        line + "\n" for line in near
    )


def _geom(feature):
    from shapely.geometry import shape

    return shape(feature["geometry"])
