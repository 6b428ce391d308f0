"""Direction measures: bearings, compass sectors, relative directions, line axes."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from shapely.geometry import LineString, Point
from shapely.geometry.base import BaseGeometry

from scoring.oracle.core import (
    AXES,
    DIRECTIONS4,
    DIRECTIONS8,
    RELATIVE,
    ConstraintScene,
    Drawing,
    EditSeeds,
    azimuth,
    drawing_of,
    measure,
    ref_point,
    sector,
    seeds_of,
)
from scoring.oracle.drawing import MIN_RAY_M, pie_slice, ray, view_radius
from scoring.oracle.seeding import translation


@measure(
    "bearing",
    "angle",
    "deg",
    "Bearing from ref(a) to ref(b), degrees clockwise from grid north (+y), in [0, 360).",
    "degrees(ST_Azimuth(ST_Centroid(a), ST_Centroid(b)))",
)
def bearing(a: BaseGeometry, b: BaseGeometry) -> float:
    """Bearing from ref(a).

    >>> from shapely import LineString, Point, box
    >>> bearing(Point(0, 0), Point(10, 10))
    45.0
    >>> bearing(Point(0, 0), Point(-10, 0))
    270.0
    """
    return azimuth(ref_point(a), ref_point(b))


@measure(
    "direction4",
    "category",
    None,
    "Four-way cardinal direction of ref(b) from ref(a): N [315, 45), E [45, 135), "
    "S [135, 225), W [225, 315) of the bearing.",
    "CASE on degrees(ST_Azimuth(ST_Centroid(a), ST_Centroid(b)))",
)
def direction4(a: BaseGeometry, b: BaseGeometry) -> str:
    """Four-way cardinal direction of ref(b).

    >>> from shapely import LineString, Point, box
    >>> direction4(Point(0, 0), Point(10, 2))
    'E'
    >>> direction4(Point(0, 0), Point(-1, -10))
    'S'
    """
    return DIRECTIONS4[sector(bearing(a, b), 4)[0]]


@measure(
    "direction8",
    "category",
    None,
    "Eight-way direction of ref(b) from ref(a): 45-degree sectors centred on N, NE, ... "
    "(N = [337.5, 22.5)).",
    "CASE on degrees(ST_Azimuth(ST_Centroid(a), ST_Centroid(b)))",
)
def direction8(a: BaseGeometry, b: BaseGeometry) -> str:
    """Eight-way direction of ref(b).

    >>> from shapely import LineString, Point, box
    >>> direction8(Point(0, 0), Point(10, 10))
    'NE'
    >>> direction8(Point(0, 0), Point(0, 10))
    'N'
    """
    return DIRECTIONS8[sector(bearing(a, b), 8)[0]]


@measure(
    "relative_direction",
    "category",
    None,
    "Where ref(b) lies for an observer at ref(a) heading `heading` degrees: relative angle "
    "r = bearing(a, b) - heading (mod 360); ahead [315, 45), right [45, 135), behind [135, 225), "
    "left [225, 315).",
    "CASE on mod(degrees(ST_Azimuth(...)) - heading + 360, 360)",
)
def relative_direction(a: BaseGeometry, b: BaseGeometry, heading: float) -> str:
    """Where ref(b).

    >>> from shapely import LineString, Point, box
    >>> relative_direction(Point(0, 0), Point(10, 0), heading=0.0)
    'right'
    >>> relative_direction(Point(0, 0), Point(0, -10), heading=0.0)
    'behind'
    """
    return RELATIVE[sector((bearing(a, b) - heading) % 360.0, 4)[0]]


@measure(
    "line_axis_azimuth",
    "angle",
    "deg",
    "Azimuth of the chord from a line's first to its last vertex, folded to [0, 180).",
    "mod(degrees(ST_Azimuth(ST_StartPoint(a), ST_EndPoint(a)))::numeric, 180)",
)
def line_axis_azimuth(a: LineString) -> float:
    """Azimuth of the chord from a line's first to its last vertex, folded to [0, 180).

    >>> from shapely import LineString, Point, box
    >>> line_axis_azimuth(LineString([(0, 0), (10, 10)]))
    45.0
    >>> line_axis_azimuth(LineString([(10, 10), (0, 0)]))
    45.0
    """
    p, q = Point(a.coords[0]), Point(a.coords[-1])
    return azimuth(p, q) % 180.0


@measure(
    "axis",
    "category",
    None,
    "Orientation class of a line's chord: N-S [157.5, 22.5), NE-SW [22.5, 67.5), "
    "E-W [67.5, 112.5), NW-SE [112.5, 157.5) of the folded azimuth.",
    "CASE on the folded chord azimuth",
)
def axis(a: LineString) -> str:
    """Orientation class of a line's chord: N-S [157.5, 22.5), NE-SW [22.5, 67.5), E-W [67.5, 112.5),
    NW-SE [112.5, 157.5).

    >>> from shapely import LineString, Point, box
    >>> axis(LineString([(0, 0), (10, 10)]))
    'NE-SW'
    >>> axis(LineString([(0, 0), (0, 10)]))
    'N-S'
    """
    return AXES[sector(line_axis_azimuth(a) * 2.0, 4)[0]]


# The compass each category measure names its sectors with.
COMPASSES = {"direction4": DIRECTIONS4, "direction8": DIRECTIONS8, "relative_direction": RELATIVE}


def wanted_bearing(c: Mapping[str, Any]) -> float:
    """The bearing from the observer that a direction constraint asks the target to lie at
    (the centre of the asked sector)."""
    m = c["measure"]
    if m == "bearing":
        return c["target"]
    if m == "relative_direction":
        return (c["params"]["heading"] + 90.0 * RELATIVE.index(c["value"])) % 360.0
    labels = COMPASSES[m]
    return labels.index(c["value"]) * 360.0 / len(labels)


# ---------------------------------------------------------------- explanation drawings


@drawing_of("bearing", "direction4", "direction8", "relative_direction")
def draw_direction(case: ConstraintScene) -> Drawing:
    """Rays from the observer's reference point and the sector of the allowed range."""
    c, args = case.constraint, case.args
    p, q = ref_point(case.geom(args[0])), ref_point(case.geom(args[1]))
    radius = view_radius(case.geom(args[0]), case.geom(args[1]))
    actual = azimuth(p, q)
    parts: Drawing = []
    if c["measure"] == "bearing":
        tgt, tol = float(c["target"]), float(c["tolerance"])
        parts.append(("allowed", pie_slice(p, tgt - tol, tgt + tol, radius)))
        parts.append(("limit", ray(p, tgt, radius)))
    else:
        labels = COMPASSES[c["measure"]]
        offset = float(case.params.get("heading", 0.0)) if c["measure"] == "relative_direction" else 0.0
        n = len(labels)
        width = 360.0 / n
        if c.get("value") in labels:
            centre = offset + labels.index(c["value"]) * width
            parts.append(("allowed", pie_slice(p, centre - width / 2, centre + width / 2, radius)))
        for k in range(n):  # sector edges
            parts.append(("limit", ray(p, offset + k * width + width / 2, radius)))
        if c["measure"] == "relative_direction":
            parts.append(("reference", ray(p, offset, radius)))  # the observer's heading
    parts.append(("marker", p))
    if p.distance(q) > 0:
        parts.append(("measured", ray(p, actual, p.distance(q))))
    return parts


@drawing_of("axis", "line_axis_azimuth")
def draw_axis(case: ConstraintScene) -> Drawing:
    """The chord measured and, for an axis class, its double sector."""
    c = case.constraint
    line = case.geom(case.args[0])
    a0, a1 = Point(line.coords[0]), Point(line.coords[-1])
    mid = Point((a0.x + a1.x) / 2, (a0.y + a1.y) / 2)
    radius = max(MIN_RAY_M, 0.6 * a0.distance(a1))
    parts: Drawing = []
    if c["measure"] == "axis" and c.get("value") in AXES:
        centre = AXES.index(c["value"]) * 45.0
        for base in (centre, centre + 180.0):  # an axis is a double sector
            parts.append(("allowed", pie_slice(mid, base - 22.5, base + 22.5, radius)))
    parts.append(("reference", line))
    parts.append(("measured", LineString([a0, a1])))
    return parts


# ---------------------------------------------------------------- edit seeds


@seeds_of("bearing", "direction4", "direction8", "relative_direction")
def seed_direction(case: ConstraintScene) -> EditSeeds:
    """The target moved onto the wanted bearing at its distance (and nearer, farther), or
    rotated there about the observer."""
    if case.args[-1] != case.target:
        return
    origin = ref_point(case.geom(case.args[0]))
    here = ref_point(case.target_geom)
    want = wanted_bearing(case.constraint)
    r = origin.distance(here)
    for rr in (r, max(r * 0.5, 1.0), r * 1.5):
        x, y = origin.x + rr * math.sin(math.radians(want)), origin.y + rr * math.cos(math.radians(want))
        yield translation(x - here.x, y - here.y)
    delta = (want - azimuth(origin, here) + 540.0) % 360.0 - 180.0
    yield [
        {
            "op": "rotate",
            "degrees_clockwise": round(delta, 4),
            "origin": [round(origin.x, 3), round(origin.y, 3)],
        }
    ]


@seeds_of("axis")
def seed_axis(case: ConstraintScene) -> EditSeeds:
    """The line rotated about its centroid onto the wanted axis."""
    if case.args[0] != case.target:
        return
    az = line_axis_azimuth(case.target_geom)
    want = AXES.index(case.constraint["value"]) * 45.0
    delta = (want - az + 90.0) % 180.0 - 90.0
    yield [{"op": "rotate", "degrees_clockwise": round(delta, 4), "origin": "centroid"}]
