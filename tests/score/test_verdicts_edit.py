"""Editing verdicts (CSR): edits that satisfy, violate, do nothing, cannot be parsed, break the
rules or produce bad geometries; image-modality edits in pixels through real rendered sidecars."""

import json
import math

import pytest
from shapely.geometry import shape

from scoring.geometry.georef import PixelTransform
from scoring.score import score_edit, score_prediction

from .edit_helpers import pixel_edit_for_reference


def by_ops(edits, *ops):
    for inst in edits.values():
        if [o["op"] for o in inst["reference_edit"]["operations"]] == list(ops):
            return inst
    pytest.skip(f"no edit instance whose reference is {ops}")


def geometry_edit(coords_type, coords):
    return json.dumps({"geometry": {"type": coords_type, "coordinates": coords}})


@pytest.mark.parametrize("modality", ["geojson", "together"])
def test_reference_edits_all_satisfy(edits, modality):
    for inst in edits.values():
        v = score_edit(
            inst,
            "Here is my edit:\n```json\n" + json.dumps(inst["reference_edit"]) + "\n```",
            modality=modality,
        )
        assert v.verdict == "correct", (inst["id"], v.reason)
        assert v.constraints and all(c["passed"] for c in v.constraints)
        assert v.quality == pytest.approx(0, abs=0.02)
        assert v.edited_scene["features"][0]["id"] == "F0"


def test_violation_names_the_failed_constraint(edits):
    inst = by_ops(edits, "translate")
    op = inst["reference_edit"]["operations"][0]
    # the opposite move breaks at least one constraint of these instances
    bad = {"operations": [{"op": "translate", "dx": -op["dx"], "dy": -op["dy"]}]}
    v = score_edit(inst, json.dumps(bad))
    assert v.verdict == "wrong" and v.reason.startswith("constraint ")
    failed = [c for c in v.constraints if not c["passed"]]
    assert failed and all({"index", "text", "measure", "passed", "measured"} <= set(c) for c in v.constraints)
    assert v.quality > 1.0


def test_no_change_empty_and_unparsable(edits):
    inst = by_ops(edits, "translate")
    v = score_edit(inst, '{"operations": [{"op": "translate", "dx": 0, "dy": 0}]}')
    assert v.verdict == "wrong" and v.reason.startswith("no change")
    v = score_edit(inst, '{"operations": []}')
    assert v.verdict == "wrong" and "empty" in v.reason
    for text in (
        "I would move it a little to the north.",
        '{"operations": [{"op": "translate", "dx": 5,',
        '{"operations": [{"op": "teleport"}]}',
        '{"operations": [{"op": "translate", "dx": NaN, "dy": 1}]}',
    ):
        assert score_edit(inst, text).verdict == "unparsed", text
    v = score_edit(inst, "I cannot determine how to edit this.")
    assert (v.verdict, v.reason) == ("wrong", "refusal")
    assert score_edit(inst, None, status="error", error={"kind": "timeout"}).verdict == "error"


def test_disallowed_operation(edits):
    inst = next(i for i in edits.values() if "set_attribute" not in i["allowed_operations"])
    v = score_edit(
        inst,
        '{"operations": [{"op": "translate", "dx": 1, "dy": 1}, '
        '{"op": "set_attribute", "name": "layer", "value": 1}]}',
    )
    assert v.verdict == "wrong" and "not allowed" in v.reason
    attr = next(i for i in edits.values() if i["allowed_operations"] == ["set_attribute"])
    v = score_edit(attr, '{"operations": [{"op": "translate", "dx": 1, "dy": 1}]}')
    assert v.verdict == "wrong" and "not allowed" in v.reason


def test_attribute_edit(edits):
    inst = next((i for i in edits.values() if i["allowed_operations"] == ["set_attribute"]), None)
    if inst is None:
        pytest.skip("no attribute edit")
    assert score_edit(inst, json.dumps(inst["reference_edit"])).verdict == "correct"
    op = inst["reference_edit"]["operations"][0]
    wrong = {"operations": [{"op": "set_attribute", "name": op["name"], "value": "not-a-level"}]}
    assert score_edit(inst, json.dumps(wrong)).verdict == "wrong"


def test_geometry_screening(edits):
    inst = by_ops(edits, "translate")
    feat = inst["scene"]["features"][0]
    x, y = (
        feat["geometry"]["coordinates"]
        if feat["geometry"]["type"] == "Point"
        else feat["geometry"]["coordinates"][0][0]
        if feat["geometry"]["type"] == "Polygon"
        else feat["geometry"]["coordinates"][0]
    )
    cases = {
        "null_island": geometry_edit("Point", [0.5, 0.5]),
        "outside_domain": geometry_edit("Point", [9e8, -9e8]),
        "far_outside_scene": geometry_edit("Point", [x + 50_000, y]),
        "invalid": geometry_edit("Polygon", [[[x, y], [x + 10, y + 10], [x + 10, y], [x, y + 10], [x, y]]]),
        "empty": geometry_edit("Point", [])
        if False
        else json.dumps({"geometry": {"type": "MultiPoint", "coordinates": []}}),
    }
    for name, text in cases.items():
        v = score_edit(inst, text)
        assert (v.verdict, v.screen) == ("wrong", name), (name, v.reason)
    v = score_edit(inst, json.dumps({"operations": [{"op": "translate", "dx": 3e6, "dy": 0}]}))
    assert v.screen == "far_outside_scene"


def test_vertex_budget(edits):
    """An edit with far more positions than F0 is screened before any constraint is measured
    (fuzzing found such replies costing 80 ms each); a redrawn F0 of modest size is measured."""
    inst = by_ops(edits, "translate")
    f0 = next(f for f in inst["scene"]["features"] if f["id"] == inst["target"])
    x, y = shape(f0["geometry"]).centroid.coords[0]
    circle = [[x + 5 * math.cos(k / 100), y + 5 * math.sin(k / 100)] for k in range(629)]
    many = json.dumps({"geometry": {"type": "LineString", "coordinates": circle * 12}})
    assert score_edit(inst, many).screen == "too_many_vertices"
    few = json.dumps({"geometry": {"type": "LineString", "coordinates": circle[:50]}})
    assert score_edit(inst, few).screen != "too_many_vertices"


def _image_case(small_bench, edits, *ops):
    inst = by_ops(edits, *ops)
    pt = PixelTransform.from_sidecar(small_bench / "maps" / f"{inst['id']}.json")
    return inst, pt


def test_image_translate_strict_and_raster_tolerant(small_bench, edits):
    inst, pt = _image_case(small_bench, edits, "translate")
    exact = pixel_edit_for_reference(inst, pt)
    v = score_edit(inst, json.dumps(exact), modality="image", pixel_transform=pt)
    assert v.verdict == "correct" and v.raster_tolerant is True
    assert v.quality < 0.05  # metres from the reference after the pixel round trip
    # 40 px off: raster-tolerant exactly when the constraints still hold (the OR rule)
    off = score_edit(
        inst,
        json.dumps(pixel_edit_for_reference(inst, pt, extra_dx=40.0)),
        modality="image",
        pixel_transform=pt,
    )
    assert off.raster_tolerant is (off.verdict == "correct")
    back = {"operations": [{"op": "translate", "dx": -o["dx"], "dy": -o["dy"]} for o in exact["operations"]]}
    v = score_edit(inst, json.dumps(back), modality="image", pixel_transform=pt)
    assert v.verdict == "wrong" and v.raster_tolerant is False and "px" in v.reason
    near = pixel_edit_for_reference(inst, pt, extra_dx=3.0)
    v = score_edit(inst, json.dumps(near), modality="image", pixel_transform=pt)
    assert v.raster_tolerant is True
    # the y axis: "dy down" is south on the map
    feat = next(f for f in inst["scene"]["features"] if f["id"] == inst["target"])
    v = score_edit(
        inst,
        '{"operations": [{"op": "translate", "dx": 0, "dy": 100}]}',
        modality="image",
        pixel_transform=pt,
    )
    from shapely.geometry import shape

    before = shape(feat["geometry"]).centroid
    after = shape(
        next(f for f in v.edited_scene["features"] if f["id"] == inst["target"])["geometry"]
    ).centroid
    assert after.y < before.y - 5 and abs(after.x - before.x) < 1


def test_image_rotation_direction(small_bench, edits):
    inst, pt = _image_case(small_bench, edits, "rotate")
    good = score_edit(
        inst, json.dumps(pixel_edit_for_reference(inst, pt)), modality="image", pixel_transform=pt
    )
    flipped = score_edit(
        inst,
        json.dumps(pixel_edit_for_reference(inst, pt, flip_rotation=True)),
        modality="image",
        pixel_transform=pt,
    )
    assert good.raster_tolerant is True and good.quality < 0.5
    assert flipped.quality > 5 * max(good.quality, 0.1)


def test_score_prediction_loads_the_sidecar(small_bench, edits):
    inst, pt = _image_case(small_bench, edits, "translate")
    rec = {
        "task": "edit",
        "form": "edit",
        "modality": "image",
        "status": "ok",
        "text": json.dumps(pixel_edit_for_reference(inst, pt)),
    }
    v = score_prediction(inst, rec, small_bench)
    assert v.verdict == "correct" and v.raster_tolerant is True
    rec = {"task": "qa", "form": "mcq", "modality": "geojson", "status": "error", "error": {"kind": "http"}}
    assert score_prediction(inst, rec, small_bench).verdict == "error"
