"""Ordering measures: positions along a line, sides of a line, betweenness, vertical levels,
connections at endpoints."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import shapely
from shapely.geometry import LineString, MultiPoint, Point
from shapely.geometry.base import BaseGeometry

from scoring.oracle.core import (
    ConstraintScene,
    Drawing,
    EditSeeds,
    drawing_of,
    measure,
    ref_point,
    seeds_of,
)
from scoring.oracle.drawing import MIN_RAY_M, limits, line_stretch, side_strip
from scoring.oracle.seeding import line_ends, normal_at, translation


@measure(
    "along_position",
    "number",
    "m",
    "Linear-referencing position of ref(b) along line a: distance from a's first vertex to "
    "the point of a nearest to ref(b).",
    "ST_LineLocatePoint(a, ST_Centroid(b)) * ST_Length(a)",
)
def along_position(a: LineString, b: BaseGeometry) -> float:
    """Linear-referencing position of ref(b).

    >>> from shapely import LineString, Point, box
    >>> along_position(LineString([(0, 0), (100, 0)]), Point(30, 5))
    30.0
    """
    return float(a.project(ref_point(b)))


@measure(
    "along_order",
    "ids",
    None,
    "The other features ordered by along_position on line a (first vertex to last).",
    "ORDER BY ST_LineLocatePoint(a, ST_Centroid(b))",
)
def along_order(a: LineString, *others: BaseGeometry) -> list[int]:
    """The other features ordered by along_position on line a (first vertex to last).

    >>> from shapely import LineString, Point, box
    >>> along_order(LineString([(0, 0), (100, 0)]), Point(70, 1), Point(10, -2), Point(40, 3))
    [1, 2, 0]
    """
    pos = [along_position(a, b) for b in others]
    return sorted(range(len(others)), key=lambda i: pos[i])


@measure(
    "along_next",
    "id",
    None,
    "The feature passed immediately after ref(b) (params direction = after) or immediately "
    "before it (direction = before) travelling along line a: among the others, the one whose "
    "along_position is the smallest above b's (after) or the largest below it (before); equal "
    "positions: the one given first.",
    "ORDER BY ST_LineLocatePoint(a, ST_Centroid(x)) ... LIMIT 1 after / before b's position",
)
def along_next(a: LineString, b: BaseGeometry, *others: BaseGeometry, direction: str = "after") -> int:
    """Index in (b, *others) of the feature passed next after (or before) b along a.

    >>> from shapely import LineString, Point, box
    >>> road = LineString([(0, 0), (100, 0)])
    >>> along_next(road, Point(40, 3), Point(70, 1), Point(10, -2))
    1
    >>> along_next(road, Point(40, 3), Point(70, 1), Point(10, -2), direction="before")
    2
    """
    ref = along_position(a, b)
    pos = [along_position(a, o) for o in others]
    if direction == "after":
        cands = sorted((pos[i], i) for i in range(len(others)) if pos[i] > ref)
    elif direction == "before":
        cands = sorted((-pos[i], i) for i in range(len(others)) if pos[i] < ref)
    else:
        raise ValueError(f"along_next: direction must be 'after' or 'before', not {direction!r}")
    if not cands:
        raise ValueError(f"along_next: no feature is passed {direction} it")
    return cands[0][1] + 1  # equal positions: the one given first


def _side_value(line: LineString, p: Point) -> float:
    """Signed offset of p from the segment of `line` nearest to it: > 0 left, < 0 right."""
    coords = list(line.coords)
    best, best_d = 0.0, math.inf
    for (x1, y1), (x2, y2) in zip(coords[:-1], coords[1:], strict=False):
        seg = LineString([(x1, y1), (x2, y2)])
        d = seg.distance(p)
        if d < best_d:
            cross = (x2 - x1) * (p.y - y1) - (y2 - y1) * (p.x - x1)
            length = math.hypot(x2 - x1, y2 - y1) or 1.0
            best_d, best = d, cross / length
    return best


@measure(
    "side_of_line",
    "category",
    None,
    "Side of line a on which ref(b) lies, looking from a's first vertex towards its last: "
    "the sign of the cross product with the segment of a nearest to ref(b).",
    "sign of the 2-D cross product with the nearest segment (ST_ClosestPoint)",
)
def side_of_line(a: LineString, b: BaseGeometry) -> str:
    """Side of line a on which ref(b).

    >>> from shapely import LineString, Point, box
    >>> side_of_line(LineString([(0, 0), (100, 0)]), Point(50, 10))
    'left'
    >>> side_of_line(LineString([(0, 0), (100, 0)]), Point(50, -10))
    'right'
    """
    v = _side_value(a, ref_point(b))
    return "left" if v > 0 else ("right" if v < 0 else "on")


@measure(
    "same_side",
    "bool",
    None,
    "ref(b) and ref(c) lie on the same side of line a.",
    "side_of_line(a, b) = side_of_line(a, c)",
)
def same_side(a: LineString, b: BaseGeometry, c: BaseGeometry) -> bool:
    """ref(b).

    >>> from shapely import LineString, Point, box
    >>> same_side(LineString([(0, 0), (100, 0)]), Point(10, 5), Point(90, 1))
    True
    >>> same_side(LineString([(0, 0), (100, 0)]), Point(10, 5), Point(90, -1))
    False
    """
    side_b, side_c = side_of_line(a, b), side_of_line(a, c)
    return side_b == side_c and side_b != "on"


@measure(
    "strictly_between",
    "bool",
    None,
    "c lies strictly between a and b: c intersects the interior of the convex hull of a and "
    "b (the open segment when both are points) and is disjoint from a and b.",
    "ST_Intersects(c, hull) AND NOT ST_Touches(c, hull) AND ST_Disjoint(c, a) AND ST_Disjoint(c, b)",
)
def strictly_between(a: BaseGeometry, b: BaseGeometry, c: BaseGeometry) -> bool:
    """c lies strictly between a and b: c intersects the interior of the convex hull of a and b (the
    open segment when both are points).

    >>> from shapely import LineString, Point, box
    >>> strictly_between(Point(0, 0), Point(10, 0), box(4, -1, 6, 1))
    True
    >>> strictly_between(Point(0, 0), Point(10, 0), box(4, 2, 6, 3))
    False
    """
    if not (c.disjoint(a) and c.disjoint(b)):
        return False
    hull = shapely.union(a, b).convex_hull
    if hull.geom_type == "LineString":
        # The open segment: intersecting it anywhere but its endpoints.
        inter = c.intersection(hull)
        return not inter.is_empty and not inter.difference(hull.boundary).is_empty
    return bool(c.intersects(hull) and not c.touches(hull))


_UNSET = ("no", "false", "0", "")


def layer_value(value: Any) -> int | None:
    """A `layer` attribute as an integer: an int (not a bool) as it is, an integral float (1.0) as
    its integer, a string stripped and cut at its first ";" (OSM lists "1;2") then read as a
    signed decimal integer ("1.0" is not one); anything else (1.5, a list, a bool) is unreadable."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    if isinstance(value, str):
        try:
            return int(value.strip().split(";")[0].strip())
        except ValueError:
            return None
    return None


def _tagged(value: Any) -> bool:
    """A bridge / tunnel tag that says yes (yes, viaduct, culvert, ...): set, not null, and not
    no / false / 0 / empty after lower-casing and stripping."""
    return value is not None and str(value).strip().lower() not in _UNSET


def vertical_level(props: Mapping[str, Any]) -> int | None:
    """Vertical level of a road from OSM tags: `layer` if set, else +1 for a bridge, -1 for a
    tunnel, else 0. None if the attributes are absent (withheld) or `layer` is unreadable; a
    null value counts as an absent tag."""
    if not any(k in props for k in ("layer", "bridge", "tunnel")):
        return None
    if props.get("layer") is not None:
        return layer_value(props["layer"])
    if _tagged(props.get("bridge")):
        return 1
    if _tagged(props.get("tunnel")):
        return -1
    return 0


@measure(
    "level_above",
    "bool",
    None,
    "Feature a is vertically above b: vertical_level(a) > vertical_level(b), where "
    "vertical_level = layer if tagged, else +1 bridge, -1 tunnel, else 0.",
    "compare the layer / bridge / tunnel attributes",
)
def level_above(a_props: dict, b_props: dict) -> bool:
    """Feature a is vertically above b: vertical_level(a).

    >>> from shapely import LineString, Point, box
    >>> level_above({'bridge': 'yes'}, {'tunnel': 'yes'})
    True
    >>> level_above({'layer': '1'}, {'layer': 1})
    False
    """
    la, lb = vertical_level(a_props), vertical_level(b_props)
    return la is not None and lb is not None and la > lb


@measure(
    "endpoint_connected",
    "bool",
    None,
    "Two lines are connected only if an endpoint of a coincides with an endpoint of b "
    "(within eps; 0 = exact coordinate equality).",
    "ST_DWithin(ST_StartPoint/ST_EndPoint(a), ST_StartPoint/ST_EndPoint(b), eps)",
)
def endpoint_connected(a: LineString, b: LineString, eps: float = 0.0) -> bool:
    """Two lines are connected only if an endpoint of a coincides with an endpoint of b (within eps; 0 =
    exact coordinate equality).

    >>> from shapely import LineString, Point, box
    >>> endpoint_connected(LineString([(0, 0), (10, 0)]), LineString([(10, 0), (10, 10)]))
    True
    >>> endpoint_connected(LineString([(0, 0), (10, 0)]), LineString([(5, 0), (5, 10)]))
    False
    """
    if a.geom_type != "LineString" or b.geom_type != "LineString" or a.is_empty or b.is_empty:
        # only a single line has two endpoints (an edit may return a collection)
        raise ValueError(f"endpoint_connected needs two lines, got {a.geom_type} and {b.geom_type}")
    ea = [Point(a.coords[0]), Point(a.coords[-1])]
    eb = [Point(b.coords[0]), Point(b.coords[-1])]
    return any(p.distance(q) <= eps for p in ea for q in eb)


# Measures that read feature attributes instead of geometries.
ATTRIBUTE_MEASURES = {"level_above"}


# ---------------------------------------------------------------- explanation drawings


@drawing_of("side_of_line", "same_side")
def draw_side(case: ConstraintScene) -> Drawing:
    """The line, the side the feature must be on, and each feature's offset from the line."""
    c, target = case.constraint, case.target
    line = case.geom(case.args[0])
    others = case.args[1:]
    width = max(MIN_RAY_M, max(ref_point(case.geom(f)).distance(line) for f in others) * 1.5)
    parts: Drawing = [("reference", line)]
    want = c.get("value")
    if c["measure"] == "side_of_line" and want in ("left", "right"):
        parts.append(("allowed", side_strip(line, want, width)))
    else:
        # same_side: shade the side the non-target feature is on.
        fixed = [f for f in others if f != target] or others
        side = side_of_line(line, case.geom(fixed[0]))
        if side in ("left", "right"):
            wanted = side if want in (True, None) else ("right" if side == "left" else "left")
            parts.append(("allowed", side_strip(line, wanted, width)))
    for f in others:
        p = ref_point(case.geom(f))
        parts.append(("marker", p))
        if p.distance(line) > 0:
            parts.append(("measured", shapely.shortest_line(p, line)))
    return parts


@drawing_of("along_position", "along_order")
def draw_along(case: ConstraintScene) -> Drawing:
    """The line from its first vertex, the allowed stretch and each feature's projection."""
    line = case.geom(case.args[0])
    parts: Drawing = [("reference", line), ("marker", Point(line.coords[0]))]  # where positions start
    if case.constraint["measure"] == "along_position":
        low, high = limits(case.constraint)
        start = max(0.0, low or 0.0)
        end = min(line.length, high if high is not None else line.length)
        if end > start:
            parts.append(("allowed", line_stretch(line, start, end)))
    for f in case.args[1:]:
        p = ref_point(case.geom(f))
        proj = line.interpolate(line.project(p))
        parts.append(("marker", proj))
        if p.distance(proj) > 0:
            parts.append(("measured", LineString([p, proj])))
    return parts


@drawing_of("strictly_between")
def draw_between(case: ConstraintScene) -> Drawing:
    a, b, c = (case.geom(f) for f in case.args[:3])
    hull = shapely.union(a, b).convex_hull
    return [("allowed", hull), ("reference", a), ("reference", b), ("intersection", c.intersection(hull))]


@drawing_of("endpoint_connected")
def draw_endpoints(case: ConstraintScene) -> Drawing:
    ea, eb = line_ends(case.geom(case.args[0])), line_ends(case.geom(case.args[1]))
    parts: Drawing = [("marker", MultiPoint(ea + eb))]
    d, p, q = min(((p.distance(q), p, q) for p in ea for q in eb), key=lambda t: t[0])
    parts.append(("measured", LineString([p, q])) if d > 0 else ("intersection", p))
    return parts


@drawing_of("level_above")
def draw_level(case: ConstraintScene) -> Drawing:
    a, b = case.geom(case.args[0]), case.geom(case.args[1])
    return [("intersection", a.intersection(b))]


# ---------------------------------------------------------------- edit seeds


@seeds_of("level_above")
def seed_level(case: ConstraintScene) -> EditSeeds:
    args = case.args
    if args and args[0] == case.target and case.wants():
        below = vertical_level(case.props[args[1]]) or 0
        yield [{"op": "set_attribute", "name": "layer", "value": below + 1}]


def _along_targets(case: ConstraintScene, line: LineString) -> list[float]:
    """Positions along the line that satisfy an along constraint (none for a one-sided bound)."""
    c = case.constraint
    if c["measure"] == "along_order":
        order = c["value"]
        k = order.index(case.target)
        pos = [along_position(line, case.geom(i)) for i in order if i != case.target]
        lo = pos[k - 1] if k > 0 else 0.0
        hi = pos[k] if k < len(pos) else line.length
        return [(lo + hi) / 2, lo + (hi - lo) / 3, lo + 2 * (hi - lo) / 3]
    if c["op"] == "between":
        return [(c["min"] + c["max"]) / 2, c["min"] + (c["max"] - c["min"]) / 3]
    return []


@seeds_of("along_order", "along_position")
def seed_along(case: ConstraintScene) -> EditSeeds:
    """The target onto the line at the wanted positions, and 5 m to either side."""
    line = case.geom(case.args[0])
    here = ref_point(case.target_geom)
    for t in _along_targets(case, line):
        p = line.interpolate(t)
        for off in (0.0, 5.0, -5.0):
            n = normal_at(line, t)
            yield translation(p.x + off * n[0] - here.x, p.y + off * n[1] - here.y)


@seeds_of("same_side")
def seed_same_side(case: ConstraintScene) -> EditSeeds:
    """The target mirrored across the line, then placed at offsets on the other feature's side."""
    if not (case.wants() and case.target in case.args[1:]):
        return
    line = case.geom(case.args[0])
    here = ref_point(case.target_geom)
    t = line.project(here)
    q = line.interpolate(t)
    yield translation(2 * (q.x - here.x), 2 * (q.y - here.y))
    want = side_of_line(line, case.geom([a for a in case.args[1:] if a != case.target][0]))
    n = normal_at(line, t)
    sign = 1.0 if want == "left" else -1.0
    for off in (5.0, 10.0, 15.0, 3.0):
        yield translation(q.x + sign * off * n[0] - here.x, q.y + sign * off * n[1] - here.y)


@seeds_of("strictly_between")
def seed_between(case: ConstraintScene) -> EditSeeds:
    """The target's centroid onto points of the segment between the two others."""
    if case.args[2] != case.target:
        return
    p1, p2 = ref_point(case.geom(case.args[0])), ref_point(case.geom(case.args[1]))
    here = ref_point(case.target_geom)
    for f in (0.5, 0.4, 0.6, 0.3, 0.7, 0.45, 0.55):
        yield translation(p1.x + f * (p2.x - p1.x) - here.x, p1.y + f * (p2.y - p1.y) - here.y)


@seeds_of("endpoint_connected")
def seed_endpoints(case: ConstraintScene) -> EditSeeds:
    """Each target endpoint onto each endpoint of the other line, nearest pairs first."""
    if not case.wants():
        return
    other = case.geom(case.others()[0])
    pairs = sorted(
        ((p.distance(q), p, q) for p in line_ends(case.target_geom) for q in line_ends(other)),
        key=lambda t: t[0],
    )
    for _, p, q in pairs:
        yield translation(q.x - p.x, q.y - p.y)
