"""Hand-built scenes whose answers are known by construction, checked against the oracle
(scoring/oracle.py) through the fact evaluator (scoring/constraints/facts.py), plus the edit executor
(scoring/constraints/edits.py) and the constraint ops.

Every expected value below is worked out by hand (simple arithmetic in the case table), never
with the function under test. Each case is tagged with the relation code whose definition names
the measure; `test_every_relation_is_covered` checks that every code of the catalogue appears
with at least two distinct expected values.
"""

from __future__ import annotations

import math

import pytest
from shapely.geometry import LineString, Point, Polygon, box

from scoring import oracle
from scoring.constraints.edits import EditError, apply_edit
from scoring.constraints.facts import FactError, check_constraint, evaluate
from scoring.geometry.georef import CityCRS
from scoring.geometry.scene import Scene, SceneFeature
from scoring.relations import CATALOGUE

CRS = CityCRS(epsg=32635, name="x")


def point(x, y):
    return Point(x, y)


def line(*coords):
    return LineString(coords)


def square(x0, y0, x1, y1):
    return box(x0, y0, x1, y1)


def make_scene(feats: dict) -> Scene:
    """feats: id -> geometry, or id -> (geometry, props)."""
    out = []
    for fid, v in feats.items():
        geom, props = v if isinstance(v, tuple) else (v, {})
        kind = {"Point": "poi", "LineString": "road"}.get(geom.geom_type, "building")
        out.append(SceneFeature(fid, kind, geom, dict(props)))
    return Scene(CRS, out)


# A few reusable shapes.
SQ10 = square(0, 0, 10, 10)  # 10 x 10 square, centroid (5, 5)
AREA = square(0, 0, 100, 100)  # 100 x 100 area
EAST_ROAD = line((0, 0), (100, 0))  # runs east: left side is +y
PLAIN = {"bridge": "no", "tunnel": "no"}  # a road with its attributes shown, level 0
T225 = math.tan(math.radians(22.5))  # 0.41421356...: x offset of a 22.5-degree bearing at y = 1

# (code, label, measure, features, args, params, expected)
CASES = [
    # ------------------------------------------------------------ T01 equality
    (
        "T01",
        "same square, other start vertex + redundant vertex",
        "equals",
        {"F0": SQ10, "F1": Polygon([(10, 10), (0, 10), (0, 0), (5, 0), (10, 0)])},
        ["F0", "F1"],
        {},
        True,
    ),
    (
        "T01",
        "square shifted 1.5 m",
        "equals",
        {"F0": SQ10, "F1": square(1.5, 0, 11.5, 10)},
        ["F0", "F1"],
        {},
        False,
    ),
    (
        "T01",
        "square scaled 0.8 about centroid",
        "equals",
        {"F0": SQ10, "F1": square(1, 1, 9, 9)},
        ["F0", "F1"],
        {},
        False,
    ),
    (
        "T01",
        "eps: shifted 0.03 m is equal within 0.05",
        "equals_eps",
        {"F0": square(0.03, 0, 10.03, 10), "F1": SQ10},
        ["F0", "F1"],
        {"eps": 0.05},
        True,
    ),
    (
        "T01",
        "eps: shifted 0.1 m is not equal within 0.05",
        "equals_eps",
        {"F0": square(0.1, 0, 10.1, 10), "F1": SQ10},
        ["F0", "F1"],
        {"eps": 0.05},
        False,
    ),
    # ------------------------------------------------------------ T02 disjointness
    ("T02", "1 m gap", "disjoint", {"F0": SQ10, "F1": square(11, 0, 21, 10)}, ["F0", "F1"], {}, True),
    (
        "T02",
        "share a single vertex",
        "disjoint",
        {"F0": SQ10, "F1": square(10, 10, 20, 20)},
        ["F0", "F1"],
        {},
        False,
    ),
    (
        "T02",
        "road crossing the square",
        "disjoint",
        {"F0": SQ10, "F1": line((-5, 5), (15, 5))},
        ["F0", "F1"],
        {},
        False,
    ),
    ("T02", "point on the edge", "disjoint", {"F0": SQ10, "F1": point(10, 5)}, ["F0", "F1"], {}, False),
    # ------------------------------------------------------------ T03 intersection
    (
        "T03",
        "share a single vertex",
        "intersects",
        {"F0": SQ10, "F1": square(10, 10, 20, 20)},
        ["F0", "F1"],
        {},
        True,
    ),
    ("T03", "one inside the other", "intersects", {"F0": AREA, "F1": SQ10}, ["F0", "F1"], {}, True),
    ("T03", "1 m gap", "intersects", {"F0": SQ10, "F1": square(11, 0, 21, 10)}, ["F0", "F1"], {}, False),
    # ------------------------------------------------------------ T04 touching
    (
        "T04",
        "squares share a single vertex",
        "touches",
        {"F0": SQ10, "F1": square(10, 10, 20, 20)},
        ["F0", "F1"],
        {},
        True,
    ),
    (
        "T04",
        "squares share an edge",
        "touches",
        {"F0": SQ10, "F1": square(10, 0, 20, 10)},
        ["F0", "F1"],
        {},
        True,
    ),
    (
        "T04",
        "squares share part of an edge",
        "touches",
        {"F0": SQ10, "F1": square(10, 5, 20, 15)},
        ["F0", "F1"],
        {},
        True,
    ),
    ("T04", "squares overlap", "touches", {"F0": SQ10, "F1": square(5, 5, 15, 15)}, ["F0", "F1"], {}, False),
    (
        "T04",
        "squares 1 m apart",
        "touches",
        {"F0": SQ10, "F1": square(11, 0, 21, 10)},
        ["F0", "F1"],
        {},
        False,
    ),
    (
        "T04",
        "T-junction: endpoint on the other road's interior",
        "touches",
        {"F0": EAST_ROAD, "F1": line((50, 0), (50, 40))},
        ["F0", "F1"],
        {},
        True,
    ),
    (
        "T04",
        "X crossing is not touching",
        "touches",
        {"F0": EAST_ROAD, "F1": line((50, -40), (50, 40))},
        ["F0", "F1"],
        {},
        False,
    ),
    (
        "T04",
        "roads sharing an endpoint",
        "touches",
        {"F0": EAST_ROAD, "F1": line((100, 0), (150, 30))},
        ["F0", "F1"],
        {},
        True,
    ),
    (
        "T04",
        "eps: 0.03 m gap touches within 0.05",
        "touches_eps",
        {"F0": square(10.03, 0, 20, 10), "F1": SQ10},
        ["F0", "F1"],
        {"eps": 0.05},
        True,
    ),
    (
        "T04",
        "eps: 0.03 m overlap touches within 0.05",
        "touches_eps",
        {"F0": square(9.97, 0, 20, 10), "F1": SQ10},
        ["F0", "F1"],
        {"eps": 0.05},
        True,
    ),
    (
        "T04",
        "eps: 0.1 m gap does not touch",
        "touches_eps",
        {"F0": square(10.1, 0, 20, 10), "F1": SQ10},
        ["F0", "F1"],
        {"eps": 0.05},
        False,
    ),
    (
        "T04",
        "eps: 1 m overlap does not touch",
        "touches_eps",
        {"F0": square(9, 0, 20, 10), "F1": SQ10},
        ["F0", "F1"],
        {"eps": 0.05},
        False,
    ),
    # ------------------------------------------------------------ T05 crossing
    (
        "T05",
        "X crossing of two roads",
        "crosses",
        {"F0": EAST_ROAD, "F1": line((50, -40), (50, 40))},
        ["F0", "F1"],
        {},
        True,
    ),
    (
        "T05",
        "T-junction does not cross",
        "crosses",
        {"F0": EAST_ROAD, "F1": line((50, 0), (50, 40))},
        ["F0", "F1"],
        {},
        False,
    ),
    (
        "T05",
        "roads sharing an endpoint do not cross",
        "crosses",
        {"F0": EAST_ROAD, "F1": line((100, 0), (150, 30))},
        ["F0", "F1"],
        {},
        False,
    ),
    (
        "T05",
        "collinear overlapping roads do not cross",
        "crosses",
        {"F0": EAST_ROAD, "F1": line((50, 0), (150, 0))},
        ["F0", "F1"],
        {},
        False,
    ),
    (
        "T05",
        "road runs into and out of an area",
        "crosses",
        {"F0": line((-10, 50), (50, 50)), "F1": AREA},
        ["F0", "F1"],
        {},
        True,
    ),
    (
        "T05",
        "road lying inside an area",
        "crosses",
        {"F0": line((10, 50), (50, 50)), "F1": AREA},
        ["F0", "F1"],
        {},
        False,
    ),
    # ------------------------------------------------------------ T06 containment (within)
    (
        "T06",
        "square well inside",
        "within",
        {"F0": square(10, 10, 20, 20), "F1": AREA},
        ["F0", "F1"],
        {},
        True,
    ),
    (
        "T06",
        "inside, touching the boundary (still within)",
        "within",
        {"F0": square(0, 10, 10, 20), "F1": AREA},
        ["F0", "F1"],
        {},
        True,
    ),
    (
        "T06",
        "equal polygons are within each other",
        "within",
        {"F0": AREA, "F1": AREA},
        ["F0", "F1"],
        {},
        True,
    ),
    (
        "T06",
        "straddling the boundary",
        "within",
        {"F0": square(-5, 10, 5, 20), "F1": AREA},
        ["F0", "F1"],
        {},
        False,
    ),
    (
        "T06",
        "touching from outside",
        "within",
        {"F0": square(-10, 10, 0, 20), "F1": AREA},
        ["F0", "F1"],
        {},
        False,
    ),
    (
        "T06",
        "line along the boundary is not within (no interior contact)",
        "within",
        {"F0": line((0, 10), (0, 20)), "F1": AREA},
        ["F0", "F1"],
        {},
        False,
    ),
    (
        "T06",
        "... but it is covered by",
        "covered_by",
        {"F0": line((0, 10), (0, 20)), "F1": AREA},
        ["F0", "F1"],
        {},
        True,
    ),
    # ------------------------------------------------------------ T08 overlap
    ("T08", "partial overlap", "overlaps", {"F0": SQ10, "F1": square(5, 5, 15, 15)}, ["F0", "F1"], {}, True),
    ("T08", "nested", "overlaps", {"F0": square(10, 10, 20, 20), "F1": AREA}, ["F0", "F1"], {}, False),
    (
        "T08",
        "edge contact only",
        "overlaps",
        {"F0": SQ10, "F1": square(10, 0, 20, 10)},
        ["F0", "F1"],
        {},
        False,
    ),
    ("T08", "equal", "overlaps", {"F0": SQ10, "F1": square(0, 0, 10, 10)}, ["F0", "F1"], {}, False),
    (
        "T08",
        "polygon and line: different dimensions",
        "overlaps",
        {"F0": line((-5, 5), (5, 5)), "F1": SQ10},
        ["F0", "F1"],
        {},
        False,
    ),
    # ------------------------------------------------------------ T09 boundary coverage
    (
        "T09",
        "inside, sharing an edge",
        "boundary_covered",
        {"F0": square(0, 10, 10, 20), "F1": AREA},
        ["F0", "F1"],
        {},
        True,
    ),
    (
        "T09",
        "inside, sharing only a corner vertex",
        "boundary_covered",
        {"F0": square(0, 0, 10, 10), "F1": AREA},
        ["F0", "F1"],
        {},
        True,
    ),
    (
        "T09",
        "inside, one vertex on the edge",
        "boundary_covered",
        {"F0": Polygon([(0, 50), (10, 45), (10, 55)]), "F1": AREA},
        ["F0", "F1"],
        {},
        True,
    ),
    (
        "T09",
        "properly inside",
        "boundary_covered",
        {"F0": square(10, 10, 20, 20), "F1": AREA},
        ["F0", "F1"],
        {},
        False,
    ),
    (
        "T09",
        "equal is NOT boundary-covered",
        "boundary_covered",
        {"F0": AREA, "F1": square(0, 0, 100, 100)},
        ["F0", "F1"],
        {},
        False,
    ),
    (
        "T09",
        "straddling",
        "boundary_covered",
        {"F0": square(-5, 10, 5, 20), "F1": AREA},
        ["F0", "F1"],
        {},
        False,
    ),
    (
        "T09",
        "touching from outside",
        "boundary_covered",
        {"F0": square(-10, 10, 0, 20), "F1": AREA},
        ["F0", "F1"],
        {},
        False,
    ),
    (
        "T09",
        "eps: 0.03 m inside the edge",
        "boundary_covered_eps",
        {"F0": square(0.03, 10, 10, 20), "F1": AREA},
        ["F0", "F1"],
        {"eps": 0.05},
        True,
    ),
    (
        "T09",
        "eps: poking out 0.03 m",
        "boundary_covered_eps",
        {"F0": square(-0.03, 10, 10, 20), "F1": AREA},
        ["F0", "F1"],
        {"eps": 0.05},
        True,
    ),
    (
        "T09",
        "eps: poking out 0.1 m",
        "boundary_covered_eps",
        {"F0": square(-0.1, 10, 10, 20), "F1": AREA},
        ["F0", "F1"],
        {"eps": 0.05},
        False,
    ),
    (
        "T09",
        "eps: 1 m inside",
        "boundary_covered_eps",
        {"F0": square(1, 10, 10, 20), "F1": AREA},
        ["F0", "F1"],
        {"eps": 0.05},
        False,
    ),
    # ------------------------------------------------------------ T11 contains properly
    (
        "T11",
        "properly inside",
        "contained_properly",
        {"F0": square(10, 10, 20, 20), "F1": AREA},
        ["F0", "F1"],
        {},
        True,
    ),
    (
        "T11",
        "inside but touching the boundary",
        "contained_properly",
        {"F0": square(0, 10, 10, 20), "F1": AREA},
        ["F0", "F1"],
        {},
        False,
    ),
    (
        "T11",
        "inside, a single vertex on the boundary",
        "contained_properly",
        {"F0": Polygon([(0, 50), (10, 45), (10, 55)]), "F1": AREA},
        ["F0", "F1"],
        {},
        False,
    ),
    (
        "T11",
        "equal",
        "contained_properly",
        {"F0": AREA, "F1": square(0, 0, 100, 100)},
        ["F0", "F1"],
        {},
        False,
    ),
    (
        "T11",
        "straddling",
        "contained_properly",
        {"F0": square(-5, 10, 5, 20), "F1": AREA},
        ["F0", "F1"],
        {},
        False,
    ),
    (
        "T11",
        "eps: 1 m clearance",
        "contained_properly_eps",
        {"F0": square(1, 10, 10, 20), "F1": AREA},
        ["F0", "F1"],
        {"eps": 0.05},
        True,
    ),
    (
        "T11",
        "eps: only 0.03 m clearance",
        "contained_properly_eps",
        {"F0": square(0.03, 10, 10, 20), "F1": AREA},
        ["F0", "F1"],
        {"eps": 0.05},
        False,
    ),
    # ------------------------------------------------------------ D01 four-way direction
    ("D01", "due north", "direction4", {"F0": point(0, 0), "F1": point(0, 10)}, ["F0", "F1"], {}, "N"),
    (
        "D01",
        "exactly 45 deg is E (N is [315, 45))",
        "direction4",
        {"F0": point(0, 0), "F1": point(1, 1)},
        ["F0", "F1"],
        {},
        "E",
    ),
    (
        "D01",
        "just under 45 deg is N",
        "direction4",
        {"F0": point(0, 0), "F1": point(1, 1.001)},
        ["F0", "F1"],
        {},
        "N",
    ),
    (
        "D01",
        "exactly 135 deg is S",
        "direction4",
        {"F0": point(0, 0), "F1": point(1, -1)},
        ["F0", "F1"],
        {},
        "S",
    ),
    (
        "D01",
        "exactly 225 deg is W",
        "direction4",
        {"F0": point(0, 0), "F1": point(-1, -1)},
        ["F0", "F1"],
        {},
        "W",
    ),
    (
        "D01",
        "exactly 315 deg is N",
        "direction4",
        {"F0": point(0, 0), "F1": point(-1, 1)},
        ["F0", "F1"],
        {},
        "N",
    ),
    (
        "D01",
        "just under 315 deg is W",
        "direction4",
        {"F0": point(0, 0), "F1": point(-1.001, 1)},
        ["F0", "F1"],
        {},
        "W",
    ),
    (
        "D01",
        "just west of north (359.9) is N",
        "direction4",
        {"F0": point(0, 0), "F1": point(-0.01, 10)},
        ["F0", "F1"],
        {},
        "N",
    ),
    (
        "D01",
        "uses the centroid of a polygon",
        "direction4",
        {"F0": SQ10, "F1": point(20, 6)},
        ["F0", "F1"],
        {},
        "E",
    ),
    # ------------------------------------------------------------ D02 eight-way direction
    *[
        ("D02", f"unit step {d}", "direction8", {"F0": point(0, 0), "F1": point(x, y)}, ["F0", "F1"], {}, d)
        for d, (x, y) in {
            "N": (0, 1),
            "NE": (1, 1),
            "E": (1, 0),
            "SE": (1, -1),
            "S": (0, -1),
            "SW": (-1, -1),
            "W": (-1, 0),
            "NW": (-1, 1),
        }.items()
    ],
    (
        "D02",
        "just under 22.5 is N",
        "direction8",
        {"F0": point(0, 0), "F1": point(T225 - 1e-4, 1)},
        ["F0", "F1"],
        {},
        "N",
    ),
    (
        "D02",
        "just over 22.5 is NE",
        "direction8",
        {"F0": point(0, 0), "F1": point(T225 + 1e-4, 1)},
        ["F0", "F1"],
        {},
        "NE",
    ),
    (
        "D02",
        "just over 337.5 is N (wrap)",
        "direction8",
        {"F0": point(0, 0), "F1": point(-(T225 - 1e-4), 1)},
        ["F0", "F1"],
        {},
        "N",
    ),
    (
        "D02",
        "just under 337.5 is NW",
        "direction8",
        {"F0": point(0, 0), "F1": point(-(T225 + 1e-4), 1)},
        ["F0", "F1"],
        {},
        "NW",
    ),
    # ------------------------------------------------------------ D04 bearing
    ("D04", "(0,0) -> (1,1) = 45", "bearing", {"F0": point(0, 0), "F1": point(1, 1)}, ["F0", "F1"], {}, 45.0),
    (
        "D04",
        "(1,1) -> (0,0) = 225",
        "bearing",
        {"F0": point(1, 1), "F1": point(0, 0)},
        ["F0", "F1"],
        {},
        225.0,
    ),
    ("D04", "due south = 180", "bearing", {"F0": point(0, 0), "F1": point(0, -5)}, ["F0", "F1"], {}, 180.0),
    ("D04", "due west = 270", "bearing", {"F0": point(0, 0), "F1": point(-3, 0)}, ["F0", "F1"], {}, 270.0),
    (
        "D04",
        "due north = 0 (not 360)",
        "bearing",
        {"F0": point(0, 0), "F1": point(0, 7)},
        ["F0", "F1"],
        {},
        0.0,
    ),
    (
        "D04",
        "(1, sqrt3) = 30",
        "bearing",
        {"F0": point(0, 0), "F1": point(1, math.sqrt(3))},
        ["F0", "F1"],
        {},
        30.0,
    ),
    (
        "D04",
        "(-1, sqrt3) = 330",
        "bearing",
        {"F0": point(0, 0), "F1": point(-1, math.sqrt(3))},
        ["F0", "F1"],
        {},
        330.0,
    ),
    (
        "D04",
        "centroid to centroid",
        "bearing",
        {"F0": SQ10, "F1": square(20, 0, 30, 10)},
        ["F0", "F1"],
        {},
        90.0,
    ),
    # ------------------------------------------------------------ D05 relative direction
    (
        "D05",
        "heading N, target N: ahead",
        "relative_direction",
        {"F0": point(0, 0), "F1": point(0, 10)},
        ["F0", "F1"],
        {"heading": 0},
        "ahead",
    ),
    (
        "D05",
        "heading E, target N: left",
        "relative_direction",
        {"F0": point(0, 0), "F1": point(0, 10)},
        ["F0", "F1"],
        {"heading": 90},
        "left",
    ),
    (
        "D05",
        "heading W, target N: right",
        "relative_direction",
        {"F0": point(0, 0), "F1": point(0, 10)},
        ["F0", "F1"],
        {"heading": 270},
        "right",
    ),
    (
        "D05",
        "heading S, target N: behind",
        "relative_direction",
        {"F0": point(0, 0), "F1": point(0, 10)},
        ["F0", "F1"],
        {"heading": 180},
        "behind",
    ),
    (
        "D05",
        "heading 350, target at 10: ahead (wrap)",
        "relative_direction",
        {"F0": point(0, 0), "F1": point(math.sin(math.radians(10)), math.cos(math.radians(10)))},
        ["F0", "F1"],
        {"heading": 350},
        "ahead",
    ),
    (
        "D05",
        "heading 10, target at 350: ahead (wrap)",
        "relative_direction",
        {"F0": point(0, 0), "F1": point(-math.sin(math.radians(10)), math.cos(math.radians(10)))},
        ["F0", "F1"],
        {"heading": 10},
        "ahead",
    ),
    (
        "D05",
        "heading 300, target at 30 (r = 90): right",
        "relative_direction",
        {"F0": point(0, 0), "F1": point(1, math.sqrt(3))},
        ["F0", "F1"],
        {"heading": 300},
        "right",
    ),
    (
        "D05",
        "heading 405 == 45, target E: ahead",
        "relative_direction",
        {"F0": point(0, 0), "F1": point(10, 10)},
        ["F0", "F1"],
        {"heading": 405},
        "ahead",
    ),
    (
        "D05",
        "r exactly 45: right",
        "relative_direction",
        {"F0": point(0, 0), "F1": point(1, 1)},
        ["F0", "F1"],
        {"heading": 0},
        "right",
    ),
    (
        "D05",
        "r exactly 135: behind",
        "relative_direction",
        {"F0": point(0, 0), "F1": point(1, -1)},
        ["F0", "F1"],
        {"heading": 0},
        "behind",
    ),
    (
        "D05",
        "r exactly 225: left",
        "relative_direction",
        {"F0": point(0, 0), "F1": point(-1, -1)},
        ["F0", "F1"],
        {"heading": 0},
        "left",
    ),
    (
        "D05",
        "r exactly 315: ahead (as N [315, 45))",
        "relative_direction",
        {"F0": point(0, 0), "F1": point(-1, 1)},
        ["F0", "F1"],
        {"heading": 0},
        "ahead",
    ),
    # ------------------------------------------------------------ D06 axial direction
    ("D06", "north to south is N-S", "axis", {"F0": line((0, 100), (0, 0))}, ["F0"], {}, "N-S"),
    ("D06", "south to north is N-S", "axis", {"F0": line((0, 0), (0, 100))}, ["F0"], {}, "N-S"),
    ("D06", "east to west is E-W", "axis", {"F0": line((100, 0), (0, 0))}, ["F0"], {}, "E-W"),
    ("D06", "SW to NE is NE-SW", "axis", {"F0": line((0, 0), (100, 100))}, ["F0"], {}, "NE-SW"),
    ("D06", "NE to SW is NE-SW", "axis", {"F0": line((100, 100), (0, 0))}, ["F0"], {}, "NE-SW"),
    ("D06", "SE to NW is NW-SE", "axis", {"F0": line((0, 0), (-100, 100))}, ["F0"], {}, "NW-SE"),
    ("D06", "NW to SE is NW-SE", "axis", {"F0": line((0, 0), (100, -100))}, ["F0"], {}, "NW-SE"),
    (
        "D06",
        "just under 22.5 is N-S",
        "axis",
        {"F0": line((0, 0), (100 * T225 - 0.01, 100))},
        ["F0"],
        {},
        "N-S",
    ),
    (
        "D06",
        "just over 22.5 is NE-SW",
        "axis",
        {"F0": line((0, 0), (100 * T225 + 0.01, 100))},
        ["F0"],
        {},
        "NE-SW",
    ),
    (
        "D06",
        "just over 157.5 (bearing 337.6) is N-S",
        "axis",
        {"F0": line((0, 0), (-(100 * T225 - 0.01), 100))},
        ["F0"],
        {},
        "N-S",
    ),
    (
        "D06",
        "just under 157.5 is NW-SE",
        "axis",
        {"F0": line((0, 0), (-(100 * T225 + 0.01), 100))},
        ["F0"],
        {},
        "NW-SE",
    ),
    (
        "D06",
        "only the chord counts (a detour east, chord N-S)",
        "axis",
        {"F0": line((0, 0), (80, 50), (0, 100))},
        ["F0"],
        {},
        "N-S",
    ),
    (
        "D06",
        "folded azimuth: north to south = 0",
        "line_axis_azimuth",
        {"F0": line((0, 100), (0, 0))},
        ["F0"],
        {},
        0.0,
    ),
    (
        "D06",
        "folded azimuth: east to west = 90",
        "line_axis_azimuth",
        {"F0": line((100, 0), (0, 0))},
        ["F0"],
        {},
        90.0,
    ),
    (
        "D06",
        "folded azimuth: bearing 315 -> 135",
        "line_axis_azimuth",
        {"F0": line((0, 0), (-5, 5))},
        ["F0"],
        {},
        135.0,
    ),
    # ------------------------------------------------------------ M01 minimum distance
    (
        "M01",
        "square and point (15, 5)",
        "min_distance",
        {"F0": SQ10, "F1": point(15, 5)},
        ["F0", "F1"],
        {},
        5.0,
    ),
    (
        "M01",
        "square and point off the corner (13, 14): 3-4-5",
        "min_distance",
        {"F0": SQ10, "F1": point(13, 14)},
        ["F0", "F1"],
        {},
        5.0,
    ),
    (
        "M01",
        "point inside the square",
        "min_distance",
        {"F0": SQ10, "F1": point(5, 5)},
        ["F0", "F1"],
        {},
        0.0,
    ),
    (
        "M01",
        "two squares 7 m apart",
        "min_distance",
        {"F0": SQ10, "F1": square(17, 3, 27, 13)},
        ["F0", "F1"],
        {},
        7.0,
    ),
    (
        "M01",
        "road and point",
        "min_distance",
        {"F0": EAST_ROAD, "F1": point(30, -12)},
        ["F0", "F1"],
        {},
        12.0,
    ),
    # ------------------------------------------------------------ M02 boundary distance
    (
        "M02",
        "building inside area: 10 m to the outline",
        "boundary_distance",
        {"F0": square(10, 10, 20, 20), "F1": AREA},
        ["F0", "F1"],
        {},
        10.0,
    ),
    (
        "M02",
        "... while the minimum distance is 0",
        "min_distance",
        {"F0": square(10, 10, 20, 20), "F1": AREA},
        ["F0", "F1"],
        {},
        0.0,
    ),
    (
        "M02",
        "hole ring counts as outline",
        "boundary_distance",
        {
            "F0": square(30, 45, 35, 55),
            "F1": Polygon(
                [(0, 0), (100, 0), (100, 100), (0, 100)], [[(40, 40), (60, 40), (60, 60), (40, 60)]]
            ),
        },
        ["F0", "F1"],
        {},
        5.0,
    ),
    (
        "M02",
        "point stands for itself",
        "boundary_distance",
        {"F0": point(50, 30), "F1": AREA},
        ["F0", "F1"],
        {},
        30.0,
    ),
    (
        "M02",
        "disjoint polygons: same as min distance",
        "boundary_distance",
        {"F0": SQ10, "F1": square(13, 0, 20, 10)},
        ["F0", "F1"],
        {},
        3.0,
    ),
    # ------------------------------------------------------------ M04 Manhattan distance
    (
        "M04",
        "(0,0)-(3,4): 7 (Euclidean would be 5)",
        "manhattan_distance",
        {"F0": point(0, 0), "F1": point(3, 4)},
        ["F0", "F1"],
        {},
        7.0,
    ),
    ("M04", "... Euclidean 5", "min_distance", {"F0": point(0, 0), "F1": point(3, 4)}, ["F0", "F1"], {}, 5.0),
    (
        "M04",
        "negative deltas",
        "manhattan_distance",
        {"F0": point(10, 10), "F1": point(-5, 2)},
        ["F0", "F1"],
        {},
        23.0,
    ),
    (
        "M04",
        "centroids, not outlines",
        "manhattan_distance",
        {"F0": SQ10, "F1": square(20, 20, 30, 30)},
        ["F0", "F1"],
        {},
        40.0,
    ),
    # ------------------------------------------------------------ M08 Hausdorff distance
    (
        "M08",
        "parallel segments 3 m apart",
        "hausdorff_distance",
        {"F0": line((0, 0), (10, 0)), "F1": line((0, 3), (10, 3))},
        ["F0", "F1"],
        {},
        3.0,
    ),
    (
        "M08",
        "parallel segments staggered by 5",
        "hausdorff_distance",
        {"F0": line((0, 0), (10, 0)), "F1": line((5, 3), (15, 3))},
        ["F0", "F1"],
        {},
        round(math.sqrt(34), 6),
    ),
    (
        "M08",
        "square shifted 2 m",
        "hausdorff_distance",
        {"F0": SQ10, "F1": square(2, 0, 12, 10)},
        ["F0", "F1"],
        {},
        2.0,
    ),
    (
        "M08",
        "sub-segment: the far end of the longer one counts",
        "hausdorff_distance",
        {"F0": line((0, 0), (10, 0)), "F1": line((0, 0), (4, 0))},
        ["F0", "F1"],
        {},
        6.0,
    ),
    # ------------------------------------------------------------ M12 total perimeter
    (
        "M12",
        "10x10 with a 2x2 hole: 40 + 8",
        "perimeter_total",
        {"F0": Polygon([(0, 0), (10, 0), (10, 10), (0, 10)], [[(4, 4), (6, 4), (6, 6), (4, 6)]])},
        ["F0"],
        {},
        48.0,
    ),
    (
        "M12",
        "three polygons: 40 + 14 + 12",
        "perimeter_total",
        {"F0": SQ10, "F1": square(20, 0, 25, 2), "F2": Polygon([(40, 0), (43, 0), (40, 4)])},
        ["F0", "F1", "F2"],
        {},
        66.0,
    ),
    # ------------------------------------------------------------ M14 within distance
    (
        "M14",
        "count within 10 (5, exactly 10, square edge 3 counted; 10.5 and 20 not)",
        "count_within_distance",
        {
            "F0": point(0, 0),
            "F1": point(5, 0),
            "F2": point(0, 10),
            "F3": point(-10.5, 0),
            "F4": square(3, -1, 30, 1),
            "F5": point(20, 20),
        },
        ["F0", "F1", "F2", "F3", "F4", "F5"],
        {"distance": 10},
        3,
    ),
    (
        "M14",
        "count within 4",
        "count_within_distance",
        {
            "F0": point(0, 0),
            "F1": point(5, 0),
            "F2": point(0, 10),
            "F3": point(-10.5, 0),
            "F4": square(3, -1, 30, 1),
            "F5": point(20, 20),
        },
        ["F0", "F1", "F2", "F3", "F4", "F5"],
        {"distance": 4},
        1,
    ),
    (
        "M14",
        "exactly at d is within",
        "within_distance",
        {"F0": SQ10, "F1": point(15, 5)},
        ["F0", "F1"],
        {"distance": 5},
        True,
    ),
    (
        "M14",
        "just beyond d is not",
        "within_distance",
        {"F0": SQ10, "F1": point(15, 5)},
        ["F0", "F1"],
        {"distance": 4.99},
        False,
    ),
    # ------------------------------------------------------------ M15 nearest neighbour
    (
        "M15",
        "nearest of points at 10, 4, 7",
        "nearest",
        {"F0": point(0, 0), "F1": point(10, 0), "F2": point(0, -4), "F3": point(-7, 0)},
        ["F0", "F1", "F2", "F3"],
        {},
        "F2",
    ),
    (
        "M15",
        "by minimum distance, not centroid (big polygon edge at 2)",
        "nearest",
        {"F0": point(0, 0), "F1": point(5, 0), "F2": square(-100, 2, 100, 50)},
        ["F0", "F1", "F2"],
        {},
        "F2",
    ),
    (
        "M15",
        "tie: the first candidate",
        "nearest",
        {"F0": point(0, 0), "F1": point(3, 0), "F2": point(0, 3)},
        ["F0", "F1", "F2"],
        {},
        "F1",
    ),
    # ------------------------------------------------------------ M18 POI density
    (
        "M18",
        "1 km^2 with 3 of 4 POIs inside",
        "poi_density",
        {
            "F0": square(0, 0, 1000, 1000),
            "F1": point(10, 10),
            "F2": point(500, 500),
            "F3": point(990, 20),
            "F4": point(1500, 10),
        },
        ["F0", "F1", "F2", "F3", "F4"],
        {},
        3.0,
    ),
    (
        "M18",
        "0.25 km^2 with 2 inside: 8 per km^2",
        "poi_density",
        {"F0": square(0, 0, 500, 500), "F1": point(10, 10), "F2": point(400, 400), "F3": point(600, 10)},
        ["F0", "F1", "F2", "F3"],
        {},
        8.0,
    ),
    (
        "M18",
        "POI on the boundary is covered (counts)",
        "poi_density",
        {"F0": square(0, 0, 500, 500), "F1": point(500, 250)},
        ["F0", "F1"],
        {},
        4.0,
    ),
    (
        "M18",
        "POI in a hole does not count; hole reduces area (0.75 km^2, 3 POIs -> 4)",
        "poi_density",
        {
            "F0": Polygon(
                [(0, 0), (1000, 0), (1000, 1000), (0, 1000)],
                [[(100, 100), (600, 100), (600, 600), (100, 600)]],
            ),
            "F1": point(50, 50),
            "F2": point(800, 800),
            "F3": point(50, 900),
            "F4": point(300, 300),
        },
        ["F0", "F1", "F2", "F3", "F4"],
        {},
        4.0,
    ),
    # ------------------------------------------------------------ O01 along-line order
    (
        "O01",
        "road east, points at x = 20, 70, 40",
        "along_order",
        {"F0": EAST_ROAD, "F1": point(20, 5), "F2": point(70, -8), "F3": point(40, 12)},
        ["F0", "F1", "F2", "F3"],
        {},
        ["F1", "F3", "F2"],
    ),
    (
        "O01",
        "same points, road reversed",
        "along_order",
        {"F0": line((100, 0), (0, 0)), "F1": point(20, 5), "F2": point(70, -8), "F3": point(40, 12)},
        ["F0", "F1", "F2", "F3"],
        {},
        ["F2", "F3", "F1"],
    ),
    (
        "O01",
        "position uses the polygon centroid",
        "along_position",
        {"F0": EAST_ROAD, "F1": square(30, 5, 40, 15)},
        ["F0", "F1"],
        {},
        35.0,
    ),
    # ------------------------------------------------------------ O02 before / after along a route
    (
        "O02",
        "L-shaped route: position on the second leg",
        "along_position",
        {"F0": line((0, 0), (100, 0), (100, 100)), "F1": point(110, 50)},
        ["F0", "F1"],
        {},
        150.0,
    ),
    (
        "O02",
        "L-shaped route: position on the first leg",
        "along_position",
        {"F0": line((0, 0), (100, 0), (100, 100)), "F1": point(30, -10)},
        ["F0", "F1"],
        {},
        30.0,
    ),
    (
        "O02",
        "a point on the second leg is passed after one on the first",
        "along_order",
        {"F0": line((0, 0), (100, 0), (100, 100)), "F1": point(110, 50), "F2": point(30, -10)},
        ["F0", "F1", "F2"],
        {},
        ["F2", "F1"],
    ),
    # ------------------------------------------------------------ O03 same / opposite side
    (
        "O03",
        "road east: +y is left",
        "side_of_line",
        {"F0": EAST_ROAD, "F1": point(50, 10)},
        ["F0", "F1"],
        {},
        "left",
    ),
    (
        "O03",
        "road east: -y is right",
        "side_of_line",
        {"F0": EAST_ROAD, "F1": point(50, -10)},
        ["F0", "F1"],
        {},
        "right",
    ),
    (
        "O03",
        "road west: +y is right",
        "side_of_line",
        {"F0": line((100, 0), (0, 0)), "F1": point(50, 10)},
        ["F0", "F1"],
        {},
        "right",
    ),
    (
        "O03",
        "road north: +x is right",
        "side_of_line",
        {"F0": line((0, 0), (0, 100)), "F1": point(10, 50)},
        ["F0", "F1"],
        {},
        "right",
    ),
    ("O03", "on the line", "side_of_line", {"F0": EAST_ROAD, "F1": point(50, 0)}, ["F0", "F1"], {}, "on"),
    (
        "O03",
        "bent road: nearest segment is the northbound leg",
        "side_of_line",
        {"F0": line((0, 0), (50, 0), (50, 100)), "F1": point(60, 80)},
        ["F0", "F1"],
        {},
        "right",
    ),
    (
        "O03",
        "bent road: nearest segment is the eastbound leg",
        "side_of_line",
        {"F0": line((0, 0), (50, 0), (50, 100)), "F1": point(30, 10)},
        ["F0", "F1"],
        {},
        "left",
    ),
    (
        "O03",
        "same side (both +y)",
        "same_side",
        {"F0": EAST_ROAD, "F1": point(20, 5), "F2": point(80, 30)},
        ["F0", "F1", "F2"],
        {},
        True,
    ),
    (
        "O03",
        "opposite sides",
        "same_side",
        {"F0": EAST_ROAD, "F1": point(20, 5), "F2": point(80, -30)},
        ["F0", "F1", "F2"],
        {},
        False,
    ),
    (
        "O03",
        "a point on the line is on no side",
        "same_side",
        {"F0": EAST_ROAD, "F1": point(20, 0), "F2": point(80, 0)},
        ["F0", "F1", "F2"],
        {},
        False,
    ),
    # ------------------------------------------------------------ O04 strict betweenness
    (
        "O04",
        "points: midpoint of the segment",
        "strictly_between",
        {"F0": point(0, 0), "F1": point(10, 0), "F2": point(5, 0)},
        ["F0", "F1", "F2"],
        {},
        True,
    ),
    (
        "O04",
        "points: diagonal segment, interior point",
        "strictly_between",
        {"F0": point(0, 0), "F1": point(10, 10), "F2": point(3, 3)},
        ["F0", "F1", "F2"],
        {},
        True,
    ),
    (
        "O04",
        "points: an endpoint is excluded",
        "strictly_between",
        {"F0": point(0, 0), "F1": point(10, 0), "F2": point(10, 0)},
        ["F0", "F1", "F2"],
        {},
        False,
    ),
    (
        "O04",
        "points: collinear beyond the segment",
        "strictly_between",
        {"F0": point(0, 0), "F1": point(10, 0), "F2": point(15, 0)},
        ["F0", "F1", "F2"],
        {},
        False,
    ),
    (
        "O04",
        "points: off the segment",
        "strictly_between",
        {"F0": point(0, 0), "F1": point(10, 0), "F2": point(5, 1)},
        ["F0", "F1", "F2"],
        {},
        False,
    ),
    (
        "O04",
        "points: a polygon crossing the segment",
        "strictly_between",
        {"F0": point(0, 0), "F1": point(10, 0), "F2": square(4, -1, 6, 1)},
        ["F0", "F1", "F2"],
        {},
        True,
    ),
    (
        "O04",
        "polygons: a polygon inside the hull",
        "strictly_between",
        {"F0": SQ10, "F1": square(30, 0, 40, 10), "F2": square(15, 2, 25, 8)},
        ["F0", "F1", "F2"],
        {},
        True,
    ),
    (
        "O04",
        "polygons: a point inside the hull",
        "strictly_between",
        {"F0": SQ10, "F1": square(30, 0, 40, 10), "F2": point(20, 5)},
        ["F0", "F1", "F2"],
        {},
        True,
    ),
    (
        "O04",
        "polygons: only touching the hull's edge",
        "strictly_between",
        {"F0": SQ10, "F1": square(30, 0, 40, 10), "F2": square(15, 10, 25, 15)},
        ["F0", "F1", "F2"],
        {},
        False,
    ),
    (
        "O04",
        "polygons: a point on the hull's edge",
        "strictly_between",
        {"F0": SQ10, "F1": square(30, 0, 40, 10), "F2": point(20, 10)},
        ["F0", "F1", "F2"],
        {},
        False,
    ),
    (
        "O04",
        "polygons: clear of the hull",
        "strictly_between",
        {"F0": SQ10, "F1": square(30, 0, 40, 10), "F2": square(15, 20, 25, 30)},
        ["F0", "F1", "F2"],
        {},
        False,
    ),
    (
        "O04",
        "polygons: in the hull but overlapping A",
        "strictly_between",
        {"F0": SQ10, "F1": square(30, 0, 40, 10), "F2": square(8, 2, 25, 8)},
        ["F0", "F1", "F2"],
        {},
        False,
    ),
    # ------------------------------------------------------------ O06 layer hierarchy
    (
        "O06",
        "bridge (layer unset) is above a plain road",
        "level_above",
        {"F0": (line((0, -50), (0, 50)), {"bridge": "yes", "tunnel": "no"}), "F1": (EAST_ROAD, PLAIN)},
        ["F0", "F1"],
        {},
        True,
    ),
    (
        "O06",
        "plain road is not above a bridge",
        "level_above",
        {"F0": (EAST_ROAD, PLAIN), "F1": (line((0, -50), (0, 50)), {"bridge": "yes", "tunnel": "no"})},
        ["F0", "F1"],
        {},
        False,
    ),
    (
        "O06",
        "plain road is above a tunnel",
        "level_above",
        {"F0": (EAST_ROAD, PLAIN), "F1": (line((0, -50), (0, 50)), {"bridge": "no", "tunnel": "yes"})},
        ["F0", "F1"],
        {},
        True,
    ),
    (
        "O06",
        "layer tag wins over bridge: bridge with layer 0 is not above layer 1",
        "level_above",
        {"F0": (EAST_ROAD, {"layer": "0", "bridge": "yes"}), "F1": (line((0, -50), (0, 50)), {"layer": "1"})},
        ["F0", "F1"],
        {},
        False,
    ),
    (
        "O06",
        "layer 2 bridge above a layer 1 bridge",
        "level_above",
        {
            "F0": (EAST_ROAD, {"layer": "2", "bridge": "yes"}),
            "F1": (line((0, -50), (0, 50)), {"layer": "1", "bridge": "yes"}),
        },
        ["F0", "F1"],
        {},
        True,
    ),
    (
        "O06",
        "same level: neither above",
        "level_above",
        {"F0": (EAST_ROAD, {"bridge": "yes"}), "F1": (line((0, -50), (0, 50)), {"layer": 1})},
        ["F0", "F1"],
        {},
        False,
    ),
    (
        "O06",
        "withheld attributes: not above",
        "level_above",
        {"F0": (EAST_ROAD, {"bridge": "yes"}), "F1": (line((0, -50), (0, 50)), {})},
        ["F0", "F1"],
        {},
        False,
    ),
    # ------------------------------------------------------------ O08 endpoint connectivity
    (
        "O08",
        "shared endpoint (end to start)",
        "endpoint_connected",
        {"F0": EAST_ROAD, "F1": line((100, 0), (150, 30))},
        ["F0", "F1"],
        {},
        True,
    ),
    (
        "O08",
        "shared endpoint (start to start)",
        "endpoint_connected",
        {"F0": EAST_ROAD, "F1": line((0, 0), (-20, 30))},
        ["F0", "F1"],
        {},
        True,
    ),
    (
        "O08",
        "T-junction is not connected",
        "endpoint_connected",
        {"F0": EAST_ROAD, "F1": line((50, 0), (50, 40))},
        ["F0", "F1"],
        {},
        False,
    ),
    (
        "O08",
        "crossing is not connected",
        "endpoint_connected",
        {"F0": EAST_ROAD, "F1": line((50, -40), (50, 40))},
        ["F0", "F1"],
        {},
        False,
    ),
    (
        "O08",
        "0.03 m gap: not exact",
        "endpoint_connected",
        {"F0": EAST_ROAD, "F1": line((100.03, 0), (150, 30))},
        ["F0", "F1"],
        {},
        False,
    ),
    (
        "O08",
        "0.03 m gap: connected within eps 0.05",
        "endpoint_connected",
        {"F0": EAST_ROAD, "F1": line((100.03, 0), (150, 30))},
        ["F0", "F1"],
        {"eps": 0.05},
        True,
    ),
    (
        "O08",
        "0.1 m gap: not connected within eps 0.05",
        "endpoint_connected",
        {"F0": EAST_ROAD, "F1": line((100.1, 0), (150, 30))},
        ["F0", "F1"],
        {"eps": 0.05},
        False,
    ),
]

# The measure(s) each relation's definition names; every case of a code must use one of them.
COVERAGE = {
    "T01": {"equals", "equals_eps"},
    "T02": {"disjoint"},
    "T03": {"intersects"},
    "T04": {"touches", "touches_eps"},
    "T05": {"crosses"},
    "T06": {"within", "covered_by"},
    "T08": {"overlaps"},
    "T09": {"boundary_covered", "boundary_covered_eps"},
    "T11": {"contained_properly", "contained_properly_eps"},
    "D01": {"direction4"},
    "D02": {"direction8"},
    "D04": {"bearing"},
    "D05": {"relative_direction"},
    "D06": {"axis", "line_axis_azimuth"},
    "M01": {"min_distance"},
    "M02": {"boundary_distance", "min_distance"},
    "M04": {"manhattan_distance", "min_distance"},
    "M08": {"hausdorff_distance"},
    "M12": {"perimeter_total"},
    "M14": {"count_within_distance", "within_distance"},
    "M15": {"nearest"},
    "M18": {"poi_density"},
    "O01": {"along_order", "along_position"},
    "O02": {"along_position", "along_order"},
    "O03": {"same_side", "side_of_line"},
    "O04": {"strictly_between"},
    "O06": {"level_above"},
    "O08": {"endpoint_connected"},
}


@pytest.mark.parametrize(
    "code,label,measure,feats,args,params,expected", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES]
)
def test_handbuilt_case(code, label, measure, feats, args, params, expected):
    assert measure in COVERAGE[code], f"{code} case uses {measure}, not a measure its definition names"
    value = evaluate(make_scene(feats), measure, args, params)
    if isinstance(expected, float):
        assert value == pytest.approx(expected, abs=1e-6)
    else:
        assert value == expected
        assert type(value) is type(expected)


def test_every_relation_is_covered():
    codes = {c[0] for c in CASES}
    assert set(CATALOGUE) == set(COVERAGE) == codes
    for code in CATALOGUE:
        values = {repr(c[-1]) for c in CASES if c[0] == code}
        assert len(values) >= 2, f"{code} needs a positive and a negative (or two distinct values)"
        for rel_measure in {c[2] for c in CASES if c[0] == code}:
            assert rel_measure in oracle.MEASURES


# ---------------------------------------------------------------- sector edges and levels


@pytest.mark.parametrize(
    "angle,n,idx",
    [
        (45.0, 4, 1),
        (44.999, 4, 0),
        (315.0, 4, 0),
        (314.999, 4, 3),
        (135.0, 4, 2),
        (225.0, 4, 3),
        (359.999, 4, 0),
        (0.0, 4, 0),
        (22.5, 8, 1),
        (22.499, 8, 0),
        (337.5, 8, 0),
        (337.499, 8, 7),
        (180.0, 8, 4),
    ],
)
def test_sector_edges(angle, n, idx):
    assert oracle.sector(angle, n)[0] == idx


def test_axis_edges_exact():
    # axis() doubles the folded azimuth into 4 sectors: 22.5 -> 45 (NE-SW), 157.5 -> 315 (N-S).
    assert oracle.AXES[oracle.sector(22.5 * 2, 4)[0]] == "NE-SW"
    assert oracle.AXES[oracle.sector(67.5 * 2, 4)[0]] == "E-W"
    assert oracle.AXES[oracle.sector(112.5 * 2, 4)[0]] == "NW-SE"
    assert oracle.AXES[oracle.sector(157.5 * 2, 4)[0]] == "N-S"


def test_bearing_in_range_near_north():
    # A tiny westward offset gives a bearing just under 360, never 360 itself.
    v = oracle.bearing(point(0, 0), point(-1e-9, 1000))
    assert 359.99 < v < 360.0
    assert oracle.bearing(point(0, 0), point(-0.0, 1000)) == 0.0


@pytest.mark.parametrize(
    "props,level",
    [
        ({"bridge": "yes"}, 1),
        ({"tunnel": "yes"}, -1),
        ({"bridge": "no", "tunnel": "no"}, 0),
        ({"layer": "2"}, 2),
        ({"layer": -1, "tunnel": "yes"}, -1),
        ({"layer": "0", "bridge": "yes"}, 0),
        ({"layer": "-2", "bridge": "yes"}, -2),
        ({"bridge": "viaduct"}, 1),
        ({"bridge": "false"}, 0),
        ({}, None),
    ],
)
def test_vertical_level(props, level):
    assert oracle.vertical_level(props) == level


@pytest.mark.parametrize("other", [line((100, 0), (150, 30)), line((50, 0), (50, 40))], ids=["endpoint", "T"])
def test_touches_eps_lines_that_touch_exactly(other):
    assert oracle.touches(EAST_ROAD, other)  # exact OGC touch
    assert oracle.touches_eps(EAST_ROAD, other, eps=0.05)
    # ...while roads that cross are not touching, however small eps is.
    assert not oracle.touches_eps(EAST_ROAD, line((50, -10), (50, 40)), eps=0.05)


def test_unknown_measure_and_missing_feature():
    sc = make_scene({"F0": SQ10})
    with pytest.raises(FactError):
        evaluate(sc, "no_such_measure", ["F0"])
    with pytest.raises(FactError):
        evaluate(sc, "area", ["F9"])


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
