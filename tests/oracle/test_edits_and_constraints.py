"""The edit executor (scoring/constraints/edits.py) and the constraint ops
(scoring/constraints/facts.py) on hand-built scenes whose answers are known by construction."""

from __future__ import annotations

import math

import pytest
from handbuilt_shapes import EAST_ROAD, PLAIN, SQ10, line, make_scene, point, square
from shapely.geometry import Polygon

from scoring.constraints.edits import EditError, apply_edit
from scoring.constraints.facts import FactError, check_constraint, evaluate

# ---------------------------------------------------------------- edit executor


def coords(g):
    return [tuple(c) for c in (g.exterior.coords if g.geom_type == "Polygon" else g.coords)]


def test_translate_moves_every_vertex():
    poly = Polygon([(0, 0), (10, 0), (12, 7), (3, 9)])
    sc = make_scene({"F0": poly, "F1": point(50, 50)})
    res = apply_edit(sc, "F0", {"operations": [{"op": "translate", "dx": 5, "dy": -2.5}]})
    assert coords(res.scene.geom("F0")) == [(x + 5, y - 2.5) for x, y in coords(poly)]
    assert res.changed_geometry and not res.changed_attributes
    assert res.scene.geom("F1").equals(point(50, 50))
    assert coords(sc.geom("F0")) == coords(poly)  # the input scene is not mutated


@pytest.mark.parametrize(
    "deg,expected", [(90, (0, -1)), (180, (-1, 0)), (270, (0, 1)), (-90, (0, 1)), (360, (1, 0))]
)
def test_rotate_clockwise_about_origin(deg, expected):
    sc = make_scene({"F0": point(1, 0)})
    res = apply_edit(sc, "F0", {"operations": [{"op": "rotate", "degrees_clockwise": deg, "origin": [0, 0]}]})
    g = res.scene.geom("F0")
    assert (g.x, g.y) == pytest.approx(expected, abs=1e-12)


def test_rotate_about_centroid_keeps_centroid_and_turns_axis():
    road = line((0, 0), (100, 0))  # E-W, centroid (50, 0)
    sc = make_scene({"F0": road})
    res = apply_edit(
        sc, "F0", {"operations": [{"op": "rotate", "degrees_clockwise": 90, "origin": "centroid"}]}
    )
    g = res.scene.geom("F0")
    assert coords(g)[0] == pytest.approx((50, 50), abs=1e-9)  # west end swings to the north
    assert coords(g)[1] == pytest.approx((50, -50), abs=1e-9)
    assert evaluate(res.scene, "axis", ["F0"]) == "N-S"


def test_scale_about_stated_origin_and_centroid():
    sc = make_scene({"F0": square(1, 1, 2, 2)})
    res = apply_edit(sc, "F0", {"operations": [{"op": "scale", "factor": 2, "origin": [0, 0]}]})
    assert sorted(coords(res.scene.geom("F0"))[:4]) == [(2, 2), (2, 4), (4, 2), (4, 4)]
    res2 = apply_edit(sc, "F0", {"operations": [{"op": "scale", "factor": 3, "origin": "centroid"}]})
    g = res2.scene.geom("F0")
    assert g.bounds == pytest.approx((0, 0, 3, 3))
    assert g.area == pytest.approx(9.0)


def test_operations_apply_in_order():
    sc = make_scene({"F0": point(1, 0)})
    ops = [{"op": "translate", "dx": 1, "dy": 0}, {"op": "rotate", "degrees_clockwise": 90, "origin": [0, 0]}]
    g = apply_edit(sc, "F0", {"operations": ops}).scene.geom("F0")
    assert (g.x, g.y) == pytest.approx((0, -2), abs=1e-12)  # (2,0) rotated, not (0,-1) shifted


def test_set_attribute():
    sc = make_scene({"F0": (EAST_ROAD, {"bridge": "no"}), "F1": (line((50, -5), (50, 5)), PLAIN)})
    assert evaluate(sc, "level_above", ["F0", "F1"]) is False
    res = apply_edit(sc, "F0", {"operations": [{"op": "set_attribute", "name": "bridge", "value": "yes"}]})
    assert res.changed_attributes and not res.changed_geometry
    assert res.scene["F0"].props == {"bridge": "yes"}
    assert sc["F0"].props == {"bridge": "no"}
    assert evaluate(res.scene, "level_above", ["F0", "F1"]) is True
    same = apply_edit(sc, "F0", {"operations": [{"op": "set_attribute", "name": "bridge", "value": "no"}]})
    assert not same.changed


@pytest.mark.parametrize(
    "edit",
    [
        {"operations": [{"op": "skew", "angle": 3}]},
        {"operations": [{"op": "translate", "dx": float("nan"), "dy": 0}]},
        {"operations": [{"op": "translate", "dx": 0, "dy": float("inf")}]},
        {"operations": [{"op": "translate", "dx": "5", "dy": 0}]},
        {"operations": [{"op": "translate", "dx": True, "dy": 0}]},
        {"operations": [{"op": "rotate", "degrees_clockwise": float("nan"), "origin": [0, 0]}]},
        {"operations": [{"op": "rotate", "degrees_clockwise": 10, "origin": [0]}]},
        {"operations": [{"op": "rotate", "degrees_clockwise": 10, "origin": "center"}]},
        {"operations": [{"op": "scale", "factor": -2, "origin": [0, 0]}]},
        {"operations": [{"op": "scale", "factor": 0}]},
        {"operations": [{"op": "scale", "factor": float("nan")}]},
        {"operations": [{"op": "set_attribute", "name": "", "value": 1}]},
        {"operations": [{"op": "set_attribute", "name": "layer", "value": float("nan")}]},
        {"operations": [{"op": "translate", "dx": 1, "dy": 1}] * 21},
        {"operations": "translate"},
        {"ops": []},
        ["translate"],
    ],
    ids=[
        "unknown-op",
        "nan-dx",
        "inf-dy",
        "str-dx",
        "bool-dx",
        "nan-rotate",
        "bad-origin",
        "origin-word",
        "negative-factor",
        "zero-factor",
        "nan-factor",
        "empty-name",
        "nan-value",
        "too-many",
        "ops-not-list",
        "no-operations",
        "not-object",
    ],
)
def test_edit_errors(edit):
    sc = make_scene({"F0": SQ10})
    with pytest.raises(EditError):
        apply_edit(sc, "F0", edit)


def test_disallowed_operation():
    sc = make_scene({"F0": SQ10})
    with pytest.raises(EditError):
        apply_edit(sc, "F0", {"operations": [{"op": "scale", "factor": 2}]}, allowed=("translate",))


# ---------------------------------------------------------------- constraint ops


def _bearing_scene(deg):
    r = math.radians(deg)
    return make_scene({"F1": point(0, 0), "F0": point(100 * math.sin(r), 100 * math.cos(r))})


@pytest.mark.parametrize(
    "value_deg,target,tol,ok",
    [
        (359, 1, 2, True),
        (1, 359, 2, True),
        (358, 1, 2, False),
        (90, 91, 1, True),
        (180, 0, 179, False),
        (0, 360, 0.001, True),
    ],
)
def test_angle_within_wraps(value_deg, target, tol, ok):
    c = {
        "measure": "bearing",
        "args": ["F1", "F0"],
        "params": {},
        "op": "angle_within",
        "target": target,
        "tolerance": tol,
    }
    got, value = check_constraint(_bearing_scene(value_deg), c)
    assert got is ok
    assert value == pytest.approx(value_deg % 360, abs=1e-6)


@pytest.mark.parametrize(
    "c,ok",
    [
        ({"op": "between", "min": 5, "max": 15}, True),
        ({"op": "between", "min": 10, "max": 15}, True),  # inclusive at the bounds (distance 10)
        ({"op": "between", "min": 10.5, "max": 15}, False),
        ({"op": "at_most", "max": 10}, True),
        ({"op": "at_most", "max": 9.9}, False),
        ({"op": "at_least", "min": 10}, True),
        ({"op": "at_least", "min": 10.1}, False),
        ({"op": "is", "value": 10.0}, True),
        ({"op": "is", "value": 10.1}, False),
    ],
)
def test_numeric_constraint_ops(c, ok):
    sc = make_scene({"F0": SQ10, "F1": point(20, 5)})  # min distance 10
    got, value = check_constraint(sc, {"measure": "min_distance", "args": ["F0", "F1"], "params": {}, **c})
    assert value == pytest.approx(10.0)
    assert got is ok


@pytest.mark.parametrize(
    "measure,value,ok",
    [
        ("touches", True, True),
        ("touches", False, False),
        ("direction4", "E", True),
        ("direction4", "N", False),
    ],
)
def test_is_constraint_categorical(measure, value, ok):
    sc = make_scene({"F0": SQ10, "F1": square(10, 0, 20, 10)})
    got, _ = check_constraint(
        sc, {"measure": measure, "args": ["F0", "F1"], "params": {}, "op": "is", "value": value}
    )
    assert got is ok


def test_is_constraint_angle_is_circular():
    sc = _bearing_scene(0)
    got, _ = check_constraint(
        sc, {"measure": "bearing", "args": ["F1", "F0"], "params": {}, "op": "is", "value": 360}
    )
    assert got is True


def test_displacement_constraint_uses_initial_scene():
    init = make_scene({"F0": SQ10, "F1": point(50, 50)})
    edited = apply_edit(init, "F0", {"operations": [{"op": "translate", "dx": 3, "dy": 4}]}).scene
    c = {"measure": "displacement", "args": ["F0"], "params": {}, "op": "at_most", "max": 5}
    assert check_constraint(edited, c, initial=init) == (True, 5.0)
    assert check_constraint(edited, {**c, "max": 4.9}, initial=init)[0] is False
    with pytest.raises(FactError):
        check_constraint(edited, c)


def test_unknown_constraint_op():
    sc = make_scene({"F0": SQ10, "F1": point(20, 5)})
    with pytest.raises(FactError):
        check_constraint(sc, {"measure": "min_distance", "args": ["F0", "F1"], "params": {}, "op": "near"})
