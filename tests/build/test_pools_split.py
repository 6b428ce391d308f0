"""Separate QA and editing pools, every slot filled, readable output, GDAL's warnings counted
(issue #12), on the embedded Helsinki extract and the shared cities."""

import json
import logging
import stat
from pathlib import Path

import pytest
from osgeo import gdal

from scoring.build.builder import build_benchmark
from scoring.extract.osm import gdal_warnings, load_pools
from scoring.extract.pools import SPLIT_TASKS, split_pools
from tests.conftest import shared_path


def load(bench: Path, name: str) -> list[dict]:
    return [json.loads(line) for line in (bench / name).read_text().splitlines()]


def source_ids(instances: list[dict]) -> set[str]:
    return {
        f["osm"] for i in instances for f in i["provenance"]["features"].values() if f.get("osm") is not None
    }


@pytest.fixture(scope="module")
def helsinki_pools():
    return load_pools(None)


def test_no_source_feature_is_in_both_task_files(helsinki_bench):
    qa, edit = load(helsinki_bench, "qa.jsonl"), load(helsinki_bench, "edit.jsonl")
    shared = source_ids(qa) & source_ids(edit)
    assert not shared, f"{len(shared)} OSM ids in both qa.jsonl and edit.jsonl, e.g. {sorted(shared)[:3]}"
    m = json.loads((helsinki_bench / "manifest.json").read_text())
    split = m["pool_split"]
    assert split["method"] == "spatial tiles" and split["tile_m"] > 0
    assert set(split["pools"]) == set(SPLIT_TASKS)


def test_split_is_a_partition_balanced_and_seed_independent(helsinki_pools):
    record = split_pools(helsinki_pools)
    qa, edit = helsinki_pools.for_task("qa"), helsinki_pools.for_task("edit")
    for kind, feats in helsinki_pools.features.items():
        a, b = {f.uid for f in qa.features[kind]}, {f.uid for f in edit.features[kind]}
        assert not a & b
        assert a | b == {f.uid for f in feats}
        # both tasks get a fair share of every kind, even of this small extract
        assert 0.3 <= len(a) / len(feats) <= 0.7, (kind, len(a), len(feats))
        # each half keeps the pools' own stable order
        order = [f.uid for f in feats]
        assert [f.uid for f in qa.features[kind]] == [u for u in order if u in a]
    again = load_pools(None)
    assert split_pools(again) == record  # a pure function of the data: no seed, no run order
    assert record["pools"]["qa"] == qa.counts()


def test_split_can_be_switched_off(tmp_path):
    m = build_benchmark(
        None, tmp_path / "b", n_qa=2, n_edit=2, relations=["M01"], jobs=1, progress=False, pool_split=False
    )
    assert m["pool_split"]["method"] == "none"
    assert m["pool_split"]["pools"]["qa"] == m["pool_split"]["pools"]["edit"]


def test_every_slot_filled_on_helsinki(helsinki_bench):
    m = json.loads((helsinki_bench / "manifest.json").read_text())
    short = [(s["relation"], s["task"], s["built"]) for s in m["shortfalls"]]
    assert not short, short
    assert all(r["built"] == 25 for r in m["build_report"])
    # constructions are the exception, each recorded with how it was made
    qa = load(helsinki_bench, "qa.jsonl") + load(helsinki_bench, "edit.jsonl")
    constructed = [
        f for i in qa for f in i["provenance"]["features"].values() if f["origin"] == "constructed"
    ]
    assert constructed and all(f["construction"] and f["osm"] for f in constructed)


def test_benchmark_directory_is_readable_by_others(helsinki_bench):
    mode = stat.S_IMODE(helsinki_bench.stat().st_mode)
    assert mode == 0o755, oct(mode)
    assert all(stat.S_IMODE(p.stat().st_mode) & 0o004 for p in helsinki_bench.iterdir())


def test_gdal_warnings_are_counted_not_printed(capfd, caplog):
    stats: dict = {}
    with caplog.at_level(logging.INFO, logger="scoring.extract.osm"), gdal_warnings(stats):
        gdal.Error(gdal.CE_Warning, 1, "Non closed ring detected. To avoid accepting it, set X")
        gdal.Error(gdal.CE_Warning, 1, "Non closed ring detected. To avoid accepting it, set X")
        gdal.Error(gdal.CE_Warning, 1, "Layer 12 has 3 problems")
    assert stats["gdal_warnings"] == {"Non closed ring detected": 2, "Layer N has N problems": 1}
    assert "Non closed ring" not in capfd.readouterr().err  # not raw in the terminal
    assert any("Non closed ring" in r.getMessage() for r in caplog.records)  # shown with -v


def test_helsinki_warnings_are_in_the_build_report(helsinki_bench, helsinki_pools):
    counts = helsinki_pools.stats["gdal_warnings"]
    assert counts.get("Non closed ring detected", 0) >= 1
    report = (helsinki_bench / "build_report.md").read_text()
    assert "GDAL warnings while reading" in report and "Non closed ring detected" in report
    assert "Pool split: spatial tiles" in report


@pytest.mark.shared
def test_paris_states_absent_classes_instead_of_shortfalls(tmp_path):
    """Paris (roads only) keeps a shortfall only where a feature class is absent, and says so."""
    src = shared_path("osm", "paris_marais_roads.osm.pbf")
    codes = ["M02", "T09", "O06", "O08", "D01"]
    m = build_benchmark(str(src), tmp_path / "p", n_qa=3, n_edit=3, relations=codes, jobs=2, progress=False)
    for s in m["shortfalls"]:
        assert "the extract has no" in s["shortfall"] or "the extract has only" in s["shortfall"], s
    assert {"M02", "T09"} <= {s["relation"] for s in m["shortfalls"]}
    assert m["counts"]["per_relation"]["O08"] == {"qa": 3, "edit": 3}


# The relations that fell short of 25 before constructions (M02, T08, T09, T11, O02, O08): every raw
# city with buildings, areas and roads now fills every slot of them, in both tasks.
SHORT_BEFORE = ["M02", "T08", "T09", "T11", "O02", "O08"]


@pytest.mark.shared
@pytest.mark.parametrize(
    "name",
    ["stockholm_norrmalm.osm", "hongkong_tsimshatsui.osm", "nairobi_kibera.osm", "london_city.osm.pbf"],
)
def test_every_slot_filled_on_shared_cities(tmp_path, name):
    m = build_benchmark(
        str(shared_path("osm", name)), tmp_path / "b", relations=SHORT_BEFORE, jobs=2, progress=False
    )
    assert m["shortfalls"] == []
    assert {(r["relation"], r["task"]): r["built"] for r in m["build_report"]} == {
        (code, task): 25 for code in SHORT_BEFORE for task in ("qa", "edit")
    }
