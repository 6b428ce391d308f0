"""Replies in the paper protocol's forms: DE-9IM class names, and map-image edits given as an edited
pixel geometry plus the attributes the instruction needs (one reader decides the runner's retry and
the scorer's verdict)."""

import json

import pytest
from shapely.geometry import mapping

from scoring.answers import parse_answer, parse_edit, read_edit_reply
from scoring.answers.edit import DOES_NOTHING, NOT_A_PIXEL_EDIT, NOT_AN_EDIT
from scoring.constraints.edits import apply_edit
from scoring.geometry.georef import PixelTransform
from scoring.geometry.scene import Scene
from scoring.runner.prompts import build_messages, corrective_messages, template_info
from scoring.score.verdicts import score_edit

SCENE = {
    "type": "FeatureCollection",
    "crs": {"type": "name", "properties": {"name": "urn:ogc:def:crs:EPSG::32635"}},
    "features": [
        {
            "type": "Feature",
            "id": "F0",
            "properties": {"id": "F0", "kind": "building"},
            "geometry": {
                "type": "Polygon",
                "coordinates": [
                    [
                        [385000, 6672000],
                        [385020, 6672000],
                        [385020, 6672020],
                        [385000, 6672020],
                        [385000, 6672000],
                    ]
                ],
            },
        },
        {
            "type": "Feature",
            "id": "F1",
            "properties": {"id": "F1", "kind": "road", "layer": 0},
            "geometry": {"type": "LineString", "coordinates": [[385100, 6671950], [385100, 6672100]]},
        },
    ],
}


def _instance(constraints, allowed=("translate",), reference=None) -> dict:
    return {
        "id": "helsinki-edit-T02-000",
        "task": "edit",
        "relation": "T02",
        "protocol": "paper",
        "edit_reply": {"image": "pixel_geometry"},
        "crs": {"epsg": 32635},
        "scene": SCENE,
        "target": "F0",
        "instruction": "Edit only F0 so that all of the following hold:\n1. F0 is within 30 m of F1.",
        "constraints": constraints,
        "allowed_operations": list(allowed),
        "reference_edit": reference or {"operations": [{"op": "translate", "dx": 60, "dy": 0}]},
        "answerable": {"geojson": True, "image": True, "together": True},
    }


NEAR = [{"measure": "min_distance", "args": ["F0", "F1"], "params": {}, "op": "at_most", "max": 30.0}]
PT = PixelTransform.from_view(4285000.0, 9000000.0, 0.25, 1536, 1536, 32635)


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("Answer: touches", "touches"),
        ("F2 lies within F0.\nAnswer: within", "within"),
        ("They overlap.", "overlaps"),
        ("Answer: **Equals**", "equals"),
        ("Answer: contains", "contains"),
        ("Answer: intersects", "intersects"),  # the paper protocol's ten labels (issue 29)
        ("Answer: covered by", "covered by"),
        ("Answer: Covers", "covers"),
        ("It is not disjoint.\nAnswer: covered_by", "covered by"),
    ],
)
def test_topology_class_names_are_read(reply, value):
    p = parse_answer(reply, "topology_class")
    assert p.ok and p.value == value


@pytest.mark.parametrize("reply", ["Answer: crosses or touches", "Answer: covers or within", "Answer: F1"])
def test_no_single_topology_class_is_not_guessed(reply):
    assert not parse_answer(reply, "topology_class").ok


def test_pixel_geometry_with_attributes_is_one_edit():
    reply = 'Here: {"pixel_geometry": {"type": "Point", "coordinates": [10, 20]}, "attributes": {"layer": 2}}'
    p = parse_edit(reply)
    assert p.ok and p.value == {
        "pixel_geometry": {"type": "Point", "coordinates": [10, 20]},
        "attributes": {"layer": 2},
    }
    alone = parse_edit('{"attributes": {"layer": 1, "bridge": "yes"}}')
    assert alone.ok and alone.value == {"attributes": {"layer": 1, "bridge": "yes"}}
    assert not parse_edit('{"attributes": {"layer": [1]}}').ok
    assert not parse_edit('{"operations": [], "attributes": {"layer": 1}}').ok


def test_the_corrective_turn_asks_for_the_pixel_form():
    inst = _instance(NEAR)
    reading = read_edit_reply("I would move it east.", inst, "image")
    assert reading.retry_reason.startswith(NOT_A_PIXEL_EDIT)
    assert read_edit_reply("I would move it east.", inst, "geojson").retry_reason.startswith(NOT_AN_EDIT)
    ok = '{"pixel_geometry": {"type": "Polygon", "coordinates": [[[1, 1], [9, 1], [9, 9], [1, 1]]]}}'
    assert read_edit_reply(ok, inst, "image").retry_reason is None
    # attributes that are already so change nothing: the corrective turn is due
    assert read_edit_reply('{"attributes": {"kind": "building"}}', inst, "image").retry_reason is None
    inst1 = dict(inst, target="F1")
    assert read_edit_reply('{"attributes": {"layer": 0}}', inst1, "image").retry_reason == DOES_NOTHING
    png = b"\x89PNG\r\n\x1a\n" + b"0" * 32
    msgs = build_messages(inst, "image", "edit", png)
    assert (
        '"pixel_geometry"' in msgs[1]["content"][0]["text"]
        and '"operations"' not in msgs[1]["content"][0]["text"]
    )
    again = corrective_messages(inst, "image", msgs, "no", reading.retry_reason)
    assert '"pixel_geometry"' in again[-1]["content"] and NOT_A_PIXEL_EDIT in again[-1]["content"]
    assert (
        template_info("edit", "image", "edit", reply_form="pixel_geometry").name
        == "edit-image-pixel-geometry"
    )
    # our own protocol keeps the operations form on the map
    plain = {k: v for k, v in inst.items() if k not in ("protocol", "edit_reply")}
    assert '"operations"' in build_messages(plain, "image", "edit", png)[1]["content"][0]["text"]


def test_a_pixel_geometry_is_mapped_back_through_the_sidecar_transform():
    inst = _instance(NEAR)
    scene = Scene.from_geojson(SCENE)
    moved = apply_edit(scene, "F0", inst["reference_edit"]).scene.geom("F0")
    px = PT.geometry_task_to_pixel(moved)
    reply = json.dumps({"pixel_geometry": mapping(px)})
    v = score_edit(inst, reply, modality="image", pixel_transform=PT)
    assert v.verdict == "correct", v.reason
    assert v.quality is not None and v.quality < 0.01  # metres from the reference edit
    far = json.dumps({"pixel_geometry": mapping(PT.geometry_task_to_pixel(scene.geom("F0")).buffer(0))})
    assert score_edit(inst, far, modality="image", pixel_transform=PT).verdict == "wrong"


def test_required_attributes_beside_the_geometry_are_applied():
    level = [{"measure": "level_above", "args": ["F1", "F0"], "params": {}, "op": "is", "value": True}]
    inst = _instance(level, allowed=("set_attribute",))
    inst["target"] = "F1"
    inst["reference_edit"] = {"operations": [{"op": "set_attribute", "name": "layer", "value": 1}]}
    inst["scene"] = json.loads(json.dumps(SCENE))
    inst["scene"]["features"][0]["properties"]["layer"] = 0
    as_drawn = mapping(PT.geometry_task_to_pixel(Scene.from_geojson(inst["scene"]).geom("F1")))
    right = json.dumps({"pixel_geometry": as_drawn, "attributes": {"layer": 1}})
    v = score_edit(inst, right, modality="image", pixel_transform=PT)
    assert v.verdict == "correct", v.reason
    assert (
        score_edit(inst, '{"attributes": {"layer": 1}}', modality="image", pixel_transform=PT).verdict
        == "correct"
    )
    wrong = score_edit(inst, '{"attributes": {"layer": -1}}', modality="image", pixel_transform=PT)
    assert wrong.verdict == "wrong"
    # an attribute the instance does not allow changing is refused, not applied
    inst2 = dict(inst, allowed_operations=["translate"])
    assert "not allowed" in score_edit(inst2, right, modality="image", pixel_transform=PT).reason
