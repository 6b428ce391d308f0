"""Map sets of the cross-map modalities (image-multi, image-context), drawn from the synthetic
benchmark's own instances: what each map shows, that each is georeferenced on its own, that the
overview contains the detail, that distractor labels never collide with the instance's, and that
the same seed gives the same bytes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from shapely.geometry import shape

from scoring.formats.benchmark import Benchmark
from scoring.formats.mapsets import read_map_set, set_path
from scoring.geometry.georef import PixelTransform
from scoring.render.multi import context_record, label_offset, relabelled, render_map_sets

N = 1536


@pytest.fixture(scope="module")
def sets(bench):
    summary = render_map_sets(bench, jobs=2)
    assert summary.sets == {"image-multi": 7, "image-context": 7}
    return Benchmark.open(bench)


def _sidecar(b: Benchmark, map_id: str) -> dict:
    return json.loads((b.maps_dir / f"{map_id}.json").read_text(encoding="utf-8"))


def _pixel_bounds(pt: PixelTransform, geom) -> tuple[float, ...]:
    return pt.geometry_task_to_pixel(geom).bounds


def test_multi_splits_the_scene_over_two_georeferenced_maps(sets):
    for inst in sets.all_instances():
        ms = read_map_set(sets.maps_dir, inst["id"], "image-multi")
        target = inst.get("target", "F0") if inst["task"] == "edit" else "F0"
        detail, overview = ms.maps
        assert (detail["role"], overview["role"]) == ("detail", "overview")
        assert detail["features"] == [target] and ms.edit_map == 0
        scene_ids = [f["properties"].get("id", f.get("id")) for f in inst["scene"]["features"]]
        others = [f for f in scene_ids if f != target]
        assert overview["features"] == (others or [target])
        side = [_sidecar(sets, m) for m in ms.map_ids]
        for sc, m in zip(side, ms.maps, strict=True):
            # each map its own georeferencing: transform, scale bar, north arrow, world file
            assert sorted(sc["features"]) == sorted(m["features"])
            assert sc["scalebar"]["length_m"] > 0 and sc["north_arrow"]["bbox"]
            assert (sets.maps_dir / f"{sc['id']}.pgw").is_file()
        d_ground = side[0]["view"]["ground_pixel_size_m"]
        o_ground = side[1]["view"]["ground_pixel_size_m"]
        assert o_ground > 1.4 * d_ground, inst["id"]  # different scales: the overview is wider
        # the overview's area contains map 1's and the whole scene's, so map 1 can be located on it
        dx0, dy0, dx1, dy1 = side[0]["view"]["bounds_3857"]
        ox0, oy0, ox1, oy1 = side[1]["view"]["bounds_3857"]
        assert ox0 < dx0 < dx1 < ox1 and oy0 < dy0 < dy1 < oy1, inst["id"]
        pt = PixelTransform.from_sidecar(sets.maps_dir / f"{ms.map_ids[1]}.json")
        for f in inst["scene"]["features"]:
            x0, y0, x1, y1 = _pixel_bounds(pt, shape(f["geometry"]))
            assert 0 <= x0 <= x1 <= N and 0 <= y0 <= y1 <= N, (inst["id"], f.get("id"))


def test_context_hides_the_instance_map_among_distractors_with_other_labels(sets):
    offset = label_offset(sets.all_instances())
    orders = set()
    for inst in sets.all_instances():
        ms = read_map_set(sets.maps_dir, inst["id"], "image-context")
        relevant = [m for m in ms.maps if m["role"] == "relevant"]
        assert [m["id"] for m in relevant] == [inst["id"]] and ms.edit_map_id == inst["id"]
        # the relevant map is the image modality's map itself, unchanged
        assert ms.pngs[ms.edit_map] == (sets.maps_dir / f"{inst['id']}.png").read_bytes()
        own = {f["properties"].get("id", f.get("id")) for f in inst["scene"]["features"]}
        same_task = [i for i in sets.all_instances() if i["task"] == inst["task"] and i["id"] != inst["id"]]
        assert len(ms.maps) == 1 + min(3, len(same_task))
        for m in ms.maps:
            if m["role"] != "distractor":
                continue
            source = sets.get(m["id"].removesuffix(".distractor"))
            assert source["task"] == inst["task"] and source["id"] != inst["id"]
            drawn = set(_sidecar(sets, m["id"])["labels"])
            assert drawn == set(m["features"]) and not drawn & own
            assert all(int(x[1:]) >= offset for x in drawn)
        orders.add(ms.edit_map)
    assert len(orders) > 1, "the relevant map should not always sit at the same position"


def test_context_order_is_seeded():
    pool = [{"id": f"c-qa-X-{k}", "task": "qa", "city": "c", "scene": {"features": []}} for k in range(9)]
    inst = {"id": "c-qa-X-0", "task": "qa", "city": "c", "scene": {"features": [{"id": "F0"}]}}
    a, b = context_record(inst, pool, 0, 5), context_record(inst, pool, 0, 5)
    assert a == b
    orders = {tuple(m["id"] for m in context_record(inst, pool, seed, 5)["maps"]) for seed in range(8)}
    assert len(orders) > 1
    assert all("c-qa-X-0" in o and len(o) == 4 for o in orders)


def test_relabelled_renumbers_labels_target_and_map_attributes():
    inst = {
        "id": "c-edit-X-1",
        "task": "edit",
        "target": "F0",
        "map_properties": {"F1": {"layer": 1}},
        "scene": {
            "features": [
                {"type": "Feature", "id": "F0", "properties": {"id": "F0"}, "geometry": None},
                {"type": "Feature", "id": "F1", "properties": {}, "geometry": None},
            ]
        },
    }
    out = relabelled(inst, 7)
    assert out["id"] == "c-edit-X-1.distractor" and out["target"] == "F7"
    assert [f["id"] for f in out["scene"]["features"]] == ["F7", "F8"]
    assert out["scene"]["features"][0]["properties"]["id"] == "F7"
    assert out["map_properties"] == {"F8": {"layer": 1}}
    assert inst["scene"]["features"][0]["id"] == "F0"  # the instance itself is untouched


def test_same_seed_same_bytes(sets, tmp_path):
    """A second drawing of one instance's sets, elsewhere, gives byte-identical files."""
    iid = sets.of_task("qa")[0]["id"]
    out = tmp_path / "maps"
    out.mkdir()
    for p in sets.maps_dir.glob(f"{iid}.png"):  # the relevant map is drawn by the image modality
        shutil.copy(p, out / p.name)
    render_map_sets(sets, ids=[iid], jobs=1, out_dir=out)
    # (maps.json: the index of this folder's maps, a subset of the benchmark's)
    written = sorted(p.name for p in out.iterdir() if p.name != "maps.json")
    assert f"{iid}.image-multi.json" in written and f"{iid}.image-context.json" in written
    for name in written:
        assert (out / name).read_bytes() == (sets.maps_dir / name).read_bytes(), name


def test_set_files_name_their_maps_and_cli_refuses_unknown_modalities(sets):
    iid = sets.of_task("edit")[0]["id"]
    rec = json.loads(set_path(sets.maps_dir, iid, "image-multi").read_text(encoding="utf-8"))
    assert rec["schema"] == "spatialgap-mapset/1" and rec["modality"] == "image-multi"
    r = subprocess.run(
        [sys.executable, "-m", "scoring", "render", "--bench", str(sets.path), "--modalities", "image,bogus"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode != 0
    err = r.stderr.strip().splitlines()
    assert len(err) == 1 and "bogus" in err[0] and "image-multi" in err[0]
