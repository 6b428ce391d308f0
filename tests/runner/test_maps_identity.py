"""The maps are part of a benchmark's identity: the render writes maps/maps.json (each map's
hash, the renderer and matplotlib versions, one digest), a run records it in its manifest, and a
run refuses a map whose bytes differ from the index (say, drawn under another matplotlib) before
it sends anything."""

from __future__ import annotations

import shutil

import pytest

from scoring.errors import InputError
from scoring.formats.maps_index import INDEX, read_index
from scoring.runner.config import ModelSpec
from scoring.runner.run import run_benchmark
from scoring.support.files import read_json
from tests.export.conftest import small_bench  # noqa: F401 - the same small benchmark, built once


def test_the_render_indexes_its_maps(small_bench):  # noqa: F811
    index = read_index(small_bench / "maps")
    assert index is not None
    assert sorted(index["maps"]) == sorted(p.name for p in (small_bench / "maps").glob("*.png"))
    assert index["renderer"]["version"] and index["renderer"]["matplotlib"]


def test_a_run_records_the_maps_and_refuses_changed_ones(small_bench, chance, tmp_path):  # noqa: F811
    bench = tmp_path / "bench"
    shutil.copytree(small_bench, bench)
    spec = ModelSpec.from_endpoint(chance.base_url, "chance", timeout_s=30)
    run_benchmark(bench, spec, "image", "qa", ["mcq"], tmp_path / "run", progress=False, limit=2)
    recorded = read_json(tmp_path / "run" / "manifest.json")["maps"]
    index = read_json(bench / "maps" / INDEX)
    assert recorded == {
        "sha256": index["sha256"],
        "renderer": index["renderer"]["version"],
        "matplotlib": index["renderer"]["matplotlib"],
    }
    first = sorted((bench / "maps").glob("*-qa-*.png"))[0]
    first.write_bytes(first.read_bytes() + b"\0")  # other pixels under the same benchmark hash
    with pytest.raises(InputError, match="does not match its hash"):
        run_benchmark(bench, spec, "image", "qa", ["mcq"], tmp_path / "run2", progress=False)
    assert not (tmp_path / "run2" / "predictions.jsonl").exists()
