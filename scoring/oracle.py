"""Stage 2 — the geometric oracle (GEOS via shapely).

Small typed functions named after the predicate or measure they compute, registered by name so
that facts (what an answer was derived from) and constraints (what an edit must satisfy) are
plain data that anyone can re-check from the scene alone. Every function works in the task CRS
(metres, +y = grid north). Each registry entry carries its PostGIS equivalent for independent
re-verification.

Conventions:
- ref(g): the reference point of a feature = its centroid (ST_Centroid); a point is its own.
- bearing: degrees clockwise from grid north (+y), in [0, 360).
- lines are directed from their first vertex to their last.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import shapely
from shapely.geometry import LineString, Point
from shapely.geometry.base import BaseGeometry

# ---------------------------------------------------------------- registry


@dataclass(frozen=True)
class Measure:
    name: str
    fn: Callable[..., Any]
    kind: str  # "bool" | "number" | "angle" | "category" | "id" | "ids" | "matrix"
    unit: str | None
    definition: str  # the reference semantics
    postgis: str  # how to re-check it in PostGIS


MEASURES: dict[str, Measure] = {}


def measure(name: str, kind: str, unit: str | None, definition: str, postgis: str):
    def deco(fn):
        MEASURES[name] = Measure(name, fn, kind, unit, definition, postgis)
        return fn

    return deco


# ---------------------------------------------------------------- helpers


def ref_point(g: BaseGeometry) -> Point:
    return g if isinstance(g, Point) else g.centroid


def azimuth(p: Point, q: Point) -> float:
    """Bearing from p to q: degrees clockwise from grid north, in [0, 360)."""
    deg = math.degrees(math.atan2(q.x - p.x, q.y - p.y)) % 360.0
    return 0.0 if deg >= 360.0 else deg


def angle_diff(a: float, b: float) -> float:
    """Smallest absolute difference between two angles in degrees (0..180)."""
    d = abs(a - b) % 360.0
    return min(d, 360.0 - d)


DIRECTIONS4 = ("N", "E", "S", "W")
DIRECTIONS8 = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")
RELATIVE = ("ahead", "right", "behind", "left")
AXES = ("N-S", "NE-SW", "E-W", "NW-SE")


def sector(angle: float, n: int) -> tuple[int, float]:
    """Index of the n-way sector (centred on 0, 360/n, ...) containing angle, and the margin in
    degrees to the nearest sector edge."""
    width = 360.0 / n
    shifted = (angle + width / 2.0) % 360.0
    idx = int(shifted // width) % n
    pos = shifted - idx * width
    return idx, min(pos, width - pos)


def sector_bounds(label: str, labels: tuple[str, ...]) -> tuple[float, float]:
    """[start, end) bearings of the sector named `label` among `labels` (centred on 0, 360/n, ...),
    the inverse of `sector`; e.g. ("E", DIRECTIONS4) -> (45.0, 135.0), ("N", ...) -> (315.0, 45.0)."""
    width = 360.0 / len(labels)
    centre = labels.index(label) * width
    return (centre - width / 2) % 360.0, (centre + width / 2) % 360.0


def dim_class(g: BaseGeometry) -> str:
    return {0: "point", 1: "line", 2: "polygon"}[shapely.get_dimensions(g)]


# ---------------------------------------------------------------- topology (DE-9IM)


@measure(
    "de9im", "matrix", None, "The DE-9IM intersection matrix of a and b (GEOS relate).", "ST_Relate(a, b)"
)
def de9im(a: BaseGeometry, b: BaseGeometry) -> str:
    return a.relate(b)


@measure("equals", "bool", None, "a and b are topologically equal (DE-9IM T*F**FFF*).", "ST_Equals(a, b)")
def equals(a, b) -> bool:
    return bool(a.equals(b))


@measure("disjoint", "bool", None, "a and b share no point (DE-9IM FF*FF****).", "ST_Disjoint(a, b)")
def disjoint(a, b) -> bool:
    return bool(a.disjoint(b))


@measure(
    "intersects", "bool", None, "a and b share at least one point (not disjoint).", "ST_Intersects(a, b)"
)
def intersects(a, b) -> bool:
    return bool(a.intersects(b))


@measure(
    "touches",
    "bool",
    None,
    "The boundaries of a and b meet but their interiors do not intersect (OGC touches).",
    "ST_Touches(a, b)",
)
def touches(a, b) -> bool:
    return bool(a.touches(b))


@measure(
    "crosses",
    "bool",
    None,
    "OGC crosses: the interiors intersect in a geometry of lower dimension than the "
    "highest of the two, and a is not contained in b.",
    "ST_Crosses(a, b)",
)
def crosses(a, b) -> bool:
    return bool(a.crosses(b))


@measure(
    "within",
    "bool",
    None,
    "OGC within: a lies in b and their interiors intersect (T*F**F***).",
    "ST_Within(a, b)",
)
def within(a, b) -> bool:
    return bool(a.within(b))


@measure(
    "overlaps",
    "bool",
    None,
    "OGC overlaps: same dimension, interiors intersect, neither contains the other.",
    "ST_Overlaps(a, b)",
)
def overlaps(a, b) -> bool:
    return bool(a.overlaps(b))


@measure(
    "covered_by",
    "bool",
    None,
    "No point of a lies outside b (T*F**F*** or *TF**F*** ...).",
    "ST_CoveredBy(a, b)",
)
def covered_by(a, b) -> bool:
    return bool(a.covered_by(b))


@measure(
    "boundary_covered",
    "bool",
    None,
    "Boundary coverage: a is covered by b, a touches b's boundary, and a is not equal to b.",
    "ST_CoveredBy(a, b) AND ST_Intersects(a, ST_Boundary(b)) AND NOT ST_Equals(a, b)",
)
def boundary_covered(a, b) -> bool:
    return bool(a.covered_by(b) and a.intersects(b.boundary) and not a.equals(b))


@measure(
    "contained_properly",
    "bool",
    None,
    "a lies in the interior of b (b contains a properly: no point of a on b's boundary).",
    "ST_ContainsProperly(b, a)",
)
def contained_properly(a, b) -> bool:
    return bool(shapely.contains_properly(b, a))


# Edit-tolerant versions of the exact predicates, documented in the relation reference: a
# model's floating-point edit cannot land exactly on a boundary, so exactness is relaxed to eps.
EDIT_EPS = 0.05  # metres


def _shrink(g: BaseGeometry, eps: float) -> BaseGeometry:
    """The interior of g pulled back by eps: polygons buffered inwards, lines shortened at both
    ends (so lines that meet only at an end come apart), points unchanged."""
    if g.geom_type.endswith("Polygon"):
        return g.buffer(-eps)
    if g.geom_type == "LineString":
        import shapely.ops

        if g.length <= 2 * eps:
            return g.interpolate(0.5, normalized=True)
        return shapely.ops.substring(g, eps, g.length - eps)
    return g


@measure(
    "equals_eps",
    "bool",
    None,
    "a and b are equal within eps: Hausdorff distance (segments densified to 1 %) <= eps.",
    "ST_HausdorffDistance(a, b, 0.01) <= eps",
)
def equals_eps(a, b, eps: float = EDIT_EPS) -> bool:
    return bool(a.geom_type == b.geom_type and shapely.hausdorff_distance(a, b, densify=0.01) <= eps)


@measure(
    "touches_eps",
    "bool",
    None,
    "a and b touch within eps: distance(a, b) <= eps and, with polygons shrunk inwards by "
    "eps, their interiors are disjoint.",
    "ST_DWithin(a, b, eps) AND NOT ST_Intersects(ST_Buffer(a, -eps), ST_Buffer(b, -eps))",
)
def touches_eps(a, b, eps: float = EDIT_EPS) -> bool:
    if a.distance(b) > eps:
        return False
    return not _shrink(a, eps).intersects(_shrink(b, eps))


@measure(
    "boundary_covered_eps",
    "bool",
    None,
    "a lies in b grown by eps, comes within eps of b's boundary, and is not equal to b " "within eps.",
    "ST_CoveredBy(a, ST_Buffer(b, eps)) AND ST_DWithin(a, ST_Boundary(b), eps) "
    "AND ST_HausdorffDistance(a, b, 0.01) > eps",
)
def boundary_covered_eps(a, b, eps: float = EDIT_EPS) -> bool:
    return bool(a.covered_by(b.buffer(eps)) and a.distance(b.boundary) <= eps and not equals_eps(a, b, eps))


@measure(
    "contained_properly_eps",
    "bool",
    None,
    "a lies in b's interior with at least eps clearance from b's boundary.",
    "ST_ContainsProperly(b, a) AND ST_Distance(a, ST_Boundary(b)) >= eps",
)
def contained_properly_eps(a, b, eps: float = EDIT_EPS) -> bool:
    return bool(shapely.contains_properly(b, a) and a.distance(b.boundary) >= eps)


# ---------------------------------------------------------------- direction


@measure(
    "bearing",
    "angle",
    "deg",
    "Bearing from ref(a) to ref(b), degrees clockwise from grid north (+y), in [0, 360).",
    "degrees(ST_Azimuth(ST_Centroid(a), ST_Centroid(b)))",
)
def bearing(a, b) -> float:
    return azimuth(ref_point(a), ref_point(b))


@measure(
    "direction4",
    "category",
    None,
    "Four-way cardinal direction of ref(b) from ref(a): N [315, 45), E [45, 135), "
    "S [135, 225), W [225, 315) of the bearing.",
    "CASE on degrees(ST_Azimuth(ST_Centroid(a), ST_Centroid(b)))",
)
def direction4(a, b) -> str:
    return DIRECTIONS4[sector(bearing(a, b), 4)[0]]


@measure(
    "direction8",
    "category",
    None,
    "Eight-way direction of ref(b) from ref(a): 45-degree sectors centred on N, NE, ... "
    "(N = [337.5, 22.5)).",
    "CASE on degrees(ST_Azimuth(ST_Centroid(a), ST_Centroid(b)))",
)
def direction8(a, b) -> str:
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
def relative_direction(a, b, heading: float) -> str:
    return RELATIVE[sector((bearing(a, b) - heading) % 360.0, 4)[0]]


@measure(
    "line_axis_azimuth",
    "angle",
    "deg",
    "Azimuth of the chord from a line's first to its last vertex, folded to [0, 180).",
    "mod(degrees(ST_Azimuth(ST_StartPoint(a), ST_EndPoint(a)))::numeric, 180)",
)
def line_axis_azimuth(a: LineString) -> float:
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
    return AXES[sector(line_axis_azimuth(a) * 2.0, 4)[0]]


# ---------------------------------------------------------------- metric


@measure("min_distance", "number", "m", "Minimum Euclidean distance between a and b.", "ST_Distance(a, b)")
def min_distance(a, b) -> float:
    # The distance to an empty geometry is infinite (GEOS's convention; shapely 2.0 says NaN).
    if a.is_empty or b.is_empty:
        return math.inf
    return float(a.distance(b))


def outline(g: BaseGeometry) -> BaseGeometry:
    """A polygon's rings; a line or a point stands for itself."""
    return g.boundary if g.geom_type in ("Polygon", "MultiPolygon") else g


@measure(
    "boundary_distance",
    "number",
    "m",
    "Minimum distance between the outlines of a and b: a polygon's outline is its rings "
    "(exterior and holes); a line or point stands for itself. Differs from min_distance "
    "when one polygon lies inside the other.",
    "ST_Distance(ST_Boundary(a), ST_Boundary(b)) for polygons",
)
def boundary_distance(a, b) -> float:
    return float(outline(a).distance(outline(b)))


@measure(
    "manhattan_distance",
    "number",
    "m",
    "|dx| + |dy| between ref(a) and ref(b) along the task CRS grid axes.",
    "abs(ST_X(ca) - ST_X(cb)) + abs(ST_Y(ca) - ST_Y(cb)) with c = ST_Centroid",
)
def manhattan_distance(a, b) -> float:
    p, q = ref_point(a), ref_point(b)
    return abs(p.x - q.x) + abs(p.y - q.y)


HAUSDORFF_DENSIFY = 0.01


@measure(
    "hausdorff_distance",
    "number",
    "m",
    "Discrete Hausdorff distance with every segment densified into 100 equal parts "
    "(densify fraction 0.01); instances keep it only where it agrees with 0.001 within 0.05 m.",
    "ST_HausdorffDistance(a, b, 0.01)",
)
def hausdorff_distance(a, b, densify: float = HAUSDORFF_DENSIFY) -> float:
    return float(shapely.hausdorff_distance(a, b, densify=densify))


@measure(
    "perimeter_total",
    "number",
    "m",
    "Sum of the perimeters (exterior and holes) of polygons.",
    "SUM(ST_Perimeter(g))",
)
def perimeter_total(*polys) -> float:
    return float(sum(p.length for p in polys))


@measure("area", "number", "m2", "Planar area.", "ST_Area(a)")
def area(a) -> float:
    return float(a.area)


@measure(
    "count_within_distance",
    "number",
    "count",
    "How many of the other features lie within `distance` metres of a (min distance <= d).",
    "COUNT(*) WHERE ST_DWithin(a, b, d)",
)
def count_within_distance(a, *others, distance: float) -> int:
    return sum(1 for b in others if a.distance(b) <= distance)


@measure("within_distance", "bool", None, "min distance between a and b <= distance.", "ST_DWithin(a, b, d)")
def within_distance(a, b, distance: float) -> bool:
    return bool(a.distance(b) <= distance)


@measure(
    "nearest",
    "id",
    None,
    "The feature (of the candidates) at the smallest minimum distance from a.",
    "ORDER BY ST_Distance(a, b) LIMIT 1",
)
def nearest(a, *candidates) -> int:
    """Index of the nearest candidate (ties: the first)."""
    d = [a.distance(c) for c in candidates]
    return min(range(len(d)), key=lambda i: d[i])


@measure(
    "poi_density",
    "number",
    "per km2",
    "Points among the others that lie within polygon a (covered by), divided by a's area in km².",
    "COUNT(*) FILTER (WHERE ST_CoveredBy(p, a)) / (ST_Area(a) / 1e6)",
)
def poi_density(a, *pois) -> float:
    n = sum(1 for p in pois if p.covered_by(a))
    return n / (a.area / 1e6)


@measure(
    "displacement",
    "number",
    "m",
    "Distance between ref(a) in the initial scene and ref(a) after the edit.",
    "ST_Distance(ST_Centroid(a_initial), ST_Centroid(a))",
)
def displacement(a_initial, a) -> float:
    return float(ref_point(a_initial).distance(ref_point(a)))


# ---------------------------------------------------------------- ordering


@measure(
    "along_position",
    "number",
    "m",
    "Linear-referencing position of ref(b) along line a: distance from a's first vertex to "
    "the point of a nearest to ref(b).",
    "ST_LineLocatePoint(a, ST_Centroid(b)) * ST_Length(a)",
)
def along_position(a: LineString, b) -> float:
    return float(a.project(ref_point(b)))


@measure(
    "along_order",
    "ids",
    None,
    "The other features ordered by along_position on line a (first vertex to last).",
    "ORDER BY ST_LineLocatePoint(a, ST_Centroid(b))",
)
def along_order(a: LineString, *others) -> list[int]:
    pos = [along_position(a, b) for b in others]
    return sorted(range(len(others)), key=lambda i: pos[i])


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
def side_of_line(a: LineString, b) -> str:
    v = _side_value(a, ref_point(b))
    return "left" if v > 0 else ("right" if v < 0 else "on")


@measure(
    "same_side",
    "bool",
    None,
    "ref(b) and ref(c) lie on the same side of line a.",
    "side_of_line(a, b) = side_of_line(a, c)",
)
def same_side(a: LineString, b, c) -> bool:
    sb, sc = side_of_line(a, b), side_of_line(a, c)
    return sb == sc and sb != "on"


@measure(
    "strictly_between",
    "bool",
    None,
    "c lies strictly between a and b: c intersects the interior of the convex hull of a and "
    "b (the open segment when both are points) and is disjoint from a and b.",
    "ST_Intersects(c, hull) AND NOT ST_Touches(c, hull) AND ST_Disjoint(c, a) AND ST_Disjoint(c, b)",
)
def strictly_between(a, b, c) -> bool:
    if not (c.disjoint(a) and c.disjoint(b)):
        return False
    hull = shapely.union(a, b).convex_hull
    if hull.geom_type == "LineString":
        # The open segment: intersecting it anywhere but its endpoints.
        inter = c.intersection(hull)
        return not inter.is_empty and not inter.difference(hull.boundary).is_empty
    return bool(c.intersects(hull) and not c.touches(hull))


def vertical_level(props: dict) -> int | None:
    """Vertical level of a road from OSM tags: `layer` if set, else +1 for a bridge, -1 for a
    tunnel, else 0. None if the attributes are absent (withheld)."""
    if not any(k in props for k in ("layer", "bridge", "tunnel")):
        return None
    if props.get("layer") is not None:
        try:
            return int(props["layer"])
        except (TypeError, ValueError):
            return None
    if str(props.get("bridge", "no")).lower() not in ("no", "false", "0", ""):
        return 1
    if str(props.get("tunnel", "no")).lower() not in ("no", "false", "0", ""):
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
    ea = [Point(a.coords[0]), Point(a.coords[-1])]
    eb = [Point(b.coords[0]), Point(b.coords[-1])]
    return any(p.distance(q) <= eps for p in ea for q in eb)


# Measures that read feature attributes instead of geometries.
ATTRIBUTE_MEASURES = {"level_above"}
