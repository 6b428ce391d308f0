"""Metric measures: distances, sizes, counts, density, displacement."""

from __future__ import annotations

import math

import numpy as np
import shapely
from shapely.geometry import LineString
from shapely.geometry.base import BaseGeometry

from scoring.oracle.core import (
    ConstraintScene,
    Drawing,
    EditSeeds,
    Geometries,
    batch_of,
    drawing_of,
    measure,
    outline,
    ref_point,
    ref_points,
    seeds_of,
)
from scoring.oracle.drawing import (
    MIN_RAY_M,
    diamond,
    distance_band,
    hausdorff_segment,
    limit_rings,
    limits,
    moving_and_fixed,
)
from scoring.oracle.seeding import approach_seeds, move_onto, scale_about_centroid


@measure("min_distance", "number", "m", "Minimum Euclidean distance between a and b.", "ST_Distance(a, b)")
def min_distance(a: BaseGeometry, b: BaseGeometry) -> float:
    # The distance to an empty geometry is infinite (GEOS's convention; shapely 2.0 says NaN).
    """Minimum Euclidean distance between a and b.

    >>> from shapely import LineString, Point, box
    >>> min_distance(Point(0, 0), box(3, 4, 5, 6))
    5.0
    """
    if a.is_empty or b.is_empty:
        return math.inf
    return float(a.distance(b))


@measure(
    "boundary_distance",
    "number",
    "m",
    "Minimum distance between the outlines of a and b: a polygon's outline is its rings "
    "(exterior and holes); a line or point stands for itself. Differs from min_distance "
    "when one polygon lies inside the other.",
    "ST_Distance(ST_Boundary(a), ST_Boundary(b)) for polygons",
)
def boundary_distance(a: BaseGeometry, b: BaseGeometry) -> float:
    """Minimum distance between the outlines of a and b: a polygon's outline is its rings (exterior and
    holes); a line or point stands for itself.

    >>> from shapely import LineString, Point, box
    >>> boundary_distance(Point(5, 5), box(0, 0, 10, 10))
    5.0
    >>> min_distance(Point(5, 5), box(0, 0, 10, 10))
    0.0
    """
    return float(outline(a).distance(outline(b)))


@measure(
    "manhattan_distance",
    "number",
    "m",
    "|dx| + |dy| between ref(a) and ref(b) along the task CRS grid axes.",
    "abs(ST_X(ca) - ST_X(cb)) + abs(ST_Y(ca) - ST_Y(cb)) with c = ST_Centroid",
)
def manhattan_distance(a: BaseGeometry, b: BaseGeometry) -> float:
    """|dx| + |dy| between ref(a).

    >>> from shapely import LineString, Point, box
    >>> manhattan_distance(Point(0, 0), Point(3, -4))
    7.0
    """
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
def hausdorff_distance(a: BaseGeometry, b: BaseGeometry, densify: float = HAUSDORFF_DENSIFY) -> float:
    """Discrete Hausdorff distance with every segment densified into 100 equal parts (densify fraction
    0.01); instances keep it only where it agrees with 0.001 within 0.05 m.

    >>> from shapely import LineString, Point, box
    >>> hausdorff_distance(LineString([(0, 0), (10, 0)]), LineString([(0, 2), (10, 5)]))
    5.0
    """
    return float(shapely.hausdorff_distance(a, b, densify=densify))


@measure(
    "perimeter_total",
    "number",
    "m",
    "Sum of the perimeters (exterior and holes) of polygons.",
    "SUM(ST_Perimeter(g))",
)
def perimeter_total(*polys: BaseGeometry) -> float:
    """Sum of the perimeters (exterior and holes).

    >>> from shapely import LineString, Point, box
    >>> perimeter_total(box(0, 0, 10, 10), box(0, 0, 2, 3))
    50.0
    """
    return float(sum(p.length for p in polys))


@measure("area", "number", "m2", "Planar area.", "ST_Area(a)")
def area(a: BaseGeometry) -> float:
    """Planar area.

    >>> from shapely import LineString, Point, box
    >>> area(box(0, 0, 10, 20))
    200.0
    """
    return float(a.area)


@measure(
    "count_within_distance",
    "number",
    "count",
    "How many of the other features lie within `distance` metres of a (min distance <= d).",
    "COUNT(*) WHERE ST_DWithin(a, b, d)",
)
def count_within_distance(a: BaseGeometry, *others: BaseGeometry, distance: float) -> int:
    """How many of the other features lie within `distance` metres of a (min distance <= d).

    >>> from shapely import LineString, Point, box
    >>> count_within_distance(Point(0, 0), Point(3, 0), Point(5, 0), Point(9, 0), distance=5.0)
    2
    """
    return sum(1 for b in others if a.distance(b) <= distance)


@measure("within_distance", "bool", None, "min distance between a and b <= distance.", "ST_DWithin(a, b, d)")
def within_distance(a: BaseGeometry, b: BaseGeometry, distance: float) -> bool:
    """min distance between a and b <= distance.

    >>> from shapely import LineString, Point, box
    >>> within_distance(Point(0, 0), Point(3, 4), distance=5.0)
    True
    >>> within_distance(Point(0, 0), Point(3, 4), distance=4.9)
    False
    """
    return bool(a.distance(b) <= distance)


@measure(
    "nearest",
    "id",
    None,
    "The feature (of the candidates) at the smallest minimum distance from a.",
    "ORDER BY ST_Distance(a, b) LIMIT 1",
)
def nearest(a: BaseGeometry, *candidates: BaseGeometry) -> int:
    """Index of the nearest candidate (ties: the first).

    >>> from shapely import LineString, Point, box
    >>> nearest(Point(0, 0), Point(9, 0), Point(0, 4), Point(5, 5))
    1
    """
    d = [a.distance(c) for c in candidates]
    return min(range(len(d)), key=lambda i: d[i])


@measure(
    "poi_density",
    "number",
    "per km2",
    "Points among the others that lie within polygon a (covered by), divided by a's area in km².",
    "COUNT(*) FILTER (WHERE ST_CoveredBy(p, a)) / (ST_Area(a) / 1e6)",
)
def poi_density(a: BaseGeometry, *pois: BaseGeometry) -> float:
    """Points among the others that lie within polygon a (covered by), divided by a's area in km².

    >>> from shapely import LineString, Point, box
    >>> poi_density(box(0, 0, 1000, 1000), Point(10, 10), Point(500, 500), Point(2000, 0))
    2.0
    """
    if not a.area > 0:  # an edit may return a point or a line: no density, not a crash
        raise ValueError(f"poi_density needs a polygon with an area, got a {a.geom_type}")
    n = sum(1 for p in pois if p.covered_by(a))
    return n / (a.area / 1e6)


@measure(
    "displacement",
    "number",
    "m",
    "Distance between ref(a) in the initial scene and ref(a) after the edit.",
    "ST_Distance(ST_Centroid(a_initial), ST_Centroid(a))",
)
def displacement(a_initial: BaseGeometry, a: BaseGeometry) -> float:
    """Distance between ref(a).

    >>> from shapely import LineString, Point, box
    >>> displacement(Point(0, 0), Point(3, 4))
    5.0
    """
    return float(ref_point(a_initial).distance(ref_point(a)))


# ---------------------------------------------------------------- batch forms (core.batch_of)
# The same shapely calls as the measures above, elementwise over an array of candidates.


@batch_of("min_distance")
def _min_distance_batch(a: Geometries, b: Geometries) -> np.ndarray:
    return np.where(shapely.is_empty(a) | shapely.is_empty(b), math.inf, shapely.distance(a, b))


@batch_of("manhattan_distance")
def _manhattan_distance_batch(a: Geometries, b: Geometries) -> np.ndarray:
    p, q = ref_points(a), ref_points(b)
    return np.abs(shapely.get_x(p) - shapely.get_x(q)) + np.abs(shapely.get_y(p) - shapely.get_y(q))


@batch_of("hausdorff_distance")
def _hausdorff_distance_batch(a: Geometries, b: Geometries, densify: float = HAUSDORFF_DENSIFY) -> np.ndarray:
    return shapely.hausdorff_distance(a, b, densify=densify)


@batch_of("within_distance")
def _within_distance_batch(a: Geometries, b: Geometries, distance: float) -> np.ndarray:
    return shapely.distance(a, b) <= distance


@batch_of("nearest")
def _nearest_batch(a: Geometries, *candidates: Geometries) -> np.ndarray:
    d = np.stack(np.broadcast_arrays(*(shapely.distance(a, c) for c in candidates)))
    return np.where(np.isnan(d).any(axis=0), -1, np.argmin(d, axis=0))  # argmin: the first of ties


@batch_of("displacement")
def _displacement_batch(a_initial: Geometries, a: Geometries) -> np.ndarray:
    return shapely.distance(ref_points(a_initial), ref_points(a))


# ---------------------------------------------------------------- explanation drawings


@drawing_of("min_distance", "boundary_distance", "within_distance")
def draw_distance(case: ConstraintScene) -> Drawing:
    """The band of allowed distances around the fixed feature and the shortest line measured."""
    m = case.constraint["measure"]
    mov, fix = moving_and_fixed(case.args, case.target)
    a, b = case.geom(mov), case.geom(fix)
    parts: Drawing = []
    if m == "boundary_distance":
        a, b = outline(a), outline(b)
        parts.append(("reference", b))
    else:
        parts.append(("reference", case.geom(fix)))
    lo, hi = limits(case.constraint)
    if m == "within_distance":
        lo, hi = None, case.params.get("distance")
    reach = max(lo or 0, hi or 0, a.distance(b)) * 1.2 + MIN_RAY_M
    parts.append(("allowed", distance_band(b, lo, hi, reach)))
    parts += limit_rings(b, lo, hi)
    if a.distance(b) > 0:
        parts.append(("measured", shapely.shortest_line(a, b)))
    else:
        parts.append(("intersection", a.intersection(b)))
    return parts


@drawing_of("manhattan_distance")
def draw_manhattan(case: ConstraintScene) -> Drawing:
    """The diamond of allowed grid distances and the east-west then north-south path."""
    mov, fix = moving_and_fixed(case.args, case.target)
    p, q = ref_point(case.geom(mov)), ref_point(case.geom(fix))
    lo, hi = limits(case.constraint)
    parts: Drawing = []
    if hi is not None:
        outer = diamond(q, hi)
        parts.append(("allowed", outer.difference(diamond(q, lo)) if lo else outer))
    parts += [("limit", diamond(q, d).boundary) for d in (lo, hi) if d]
    parts.append(("reference", q))
    parts.append(("measured", LineString([(p.x, p.y), (q.x, p.y), (q.x, q.y)])))
    return parts


@drawing_of("hausdorff_distance")
def draw_hausdorff(case: ConstraintScene) -> Drawing:
    mov, fix = moving_and_fixed(case.args, case.target)
    parts: Drawing = [("reference", case.geom(fix))]
    _, hi = limits(case.constraint)
    if hi is not None:
        parts.append(("allowed", case.geom(fix).buffer(hi, quad_segs=16)))
        parts += limit_rings(case.geom(fix), hi)
    parts.append(("measured", hausdorff_segment(case.geom(mov), case.geom(fix))))
    return parts


@drawing_of("displacement")
def draw_displacement(case: ConstraintScene) -> Drawing:
    """Where the target started, how far it may go and how far it went."""
    fid = case.args[0]
    a0, a1 = ref_point(case.initial[fid]), ref_point(case.geom(fid))
    lo, hi = limits(case.constraint)
    parts: Drawing = [("reference", case.initial[fid])]
    if hi is not None:
        parts.append(("allowed", distance_band(a0, lo, hi, hi)))
    parts += limit_rings(a0, lo, hi)
    parts.append(("marker", a0))
    if a0.distance(a1) > 0:
        parts.append(("measured", LineString([a0, a1])))
    return parts


@drawing_of("perimeter_total", "area")
def draw_size(case: ConstraintScene) -> Drawing:
    perimeter = case.constraint["measure"] == "perimeter_total"
    return [("measured", outline(case.geom(f)) if perimeter else case.geom(f)) for f in case.args]


@drawing_of("count_within_distance")
def draw_count_within(case: ConstraintScene) -> Drawing:
    a, distance = case.geom(case.args[0]), case.params["distance"]
    parts: Drawing = [("allowed", a.buffer(distance, quad_segs=16))]
    for f in case.args[1:]:
        parts.append(("measured" if a.distance(case.geom(f)) <= distance else "reference", case.geom(f)))
    return parts


@drawing_of("poi_density")
def draw_density(case: ConstraintScene) -> Drawing:
    a = case.geom(case.args[0])
    parts: Drawing = [("reference", a.boundary)]
    for f in case.args[1:]:
        parts.append(("measured" if case.geom(f).covered_by(a) else "marker", case.geom(f)))
    return parts


@drawing_of("nearest")
def draw_nearest(case: ConstraintScene) -> Drawing:
    """Shortest lines to every candidate, the wanted one as allowed."""
    a = case.geom(case.args[0])
    want = case.constraint.get("value")
    parts: Drawing = []
    for f in case.args[1:]:
        g = case.geom(f)
        line = shapely.shortest_line(a, g) if a.distance(g) > 0 else None
        role = "allowed" if f == want else "measured"
        parts.append((role, line if line is not None else a.intersection(g)))
    return parts


# ---------------------------------------------------------------- edit seeds


@seeds_of("perimeter_total", "area", "poi_density")
def seed_size(case: ConstraintScene) -> EditSeeds:
    """Scalings of the target about its centroid onto the middle of the asked range."""
    c, g = case.constraint, case.target_geom
    if c["op"] != "between":
        return
    mid = (c["min"] + c["max"]) / 2
    if c["measure"] == "perimeter_total":
        rest = sum(case.geom(a).length for a in c["args"] if a != case.target)
        if g.length > 0 and mid > rest:
            yield scale_about_centroid(round((mid - rest) / g.length, 6))
    elif c["measure"] == "area":
        if g.area > 0 and mid > 0:
            yield scale_about_centroid(round(math.sqrt(mid / g.area), 6))
    elif c["args"][0] == case.target:  # poi_density of the target
        pois = [case.geom(a) for a in c["args"][1:]]
        if mid <= 0:
            for f in (0.8, 0.6, 0.4, 0.25, 0.1, 0.05, 0.02):
                yield scale_about_centroid(f)
            return
        for n in range(1, len(pois) + 1):
            yield scale_about_centroid(round(math.sqrt(n * 1e6 / (g.area * mid)), 6))


@seeds_of("nearest")
def seed_nearest(case: ConstraintScene) -> EditSeeds:
    yield from approach_seeds(case.target_geom, case.geom(case.constraint["value"]), [1.0, 2.0, 0.5, 3.0])


@seeds_of("hausdorff_distance")
def seed_hausdorff(case: ConstraintScene) -> EditSeeds:
    if case.constraint["op"] == "at_most":
        yield move_onto(case.target_geom, ref_point(case.geom(case.others()[0])))
