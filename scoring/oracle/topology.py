"""Topology measures (DE-9IM predicates and their edit-tolerant versions)."""

from __future__ import annotations

import numpy as np
import shapely
import shapely.ops
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
    seeds_of,
)
from scoring.oracle.drawing import draw_features
from scoring.oracle.seeding import contact_seeds, inside_seeds, move_onto, translation


@measure(
    "de9im", "matrix", None, "The DE-9IM intersection matrix of a and b (GEOS relate).", "ST_Relate(a, b)"
)
def de9im(a: BaseGeometry, b: BaseGeometry) -> str:
    """The DE-9IM intersection matrix of a and b (GEOS relate).

    >>> from shapely import LineString, Point, box
    >>> de9im(box(0, 0, 2, 2), box(1, 1, 3, 3))
    '212101212'
    """
    return a.relate(b)


@measure("equals", "bool", None, "a and b are topologically equal (DE-9IM T*F**FFF*).", "ST_Equals(a, b)")
def equals(a: BaseGeometry, b: BaseGeometry) -> bool:
    """a and b are topologically equal (DE-9IM T*F**FFF*).

    >>> from shapely import LineString, Point, box
    >>> equals(box(0, 0, 1, 1), box(0, 0, 1, 1))
    True
    >>> equals(box(0, 0, 1, 1), box(0, 0, 2, 1))
    False
    """
    return bool(a.equals(b))


@measure("disjoint", "bool", None, "a and b share no point (DE-9IM FF*FF****).", "ST_Disjoint(a, b)")
def disjoint(a: BaseGeometry, b: BaseGeometry) -> bool:
    """a and b share no point (DE-9IM FF*FF****).

    >>> from shapely import LineString, Point, box
    >>> disjoint(box(0, 0, 1, 1), box(2, 0, 3, 1))
    True
    >>> disjoint(box(0, 0, 1, 1), box(1, 0, 2, 1))
    False
    """
    return bool(a.disjoint(b))


@measure(
    "intersects", "bool", None, "a and b share at least one point (not disjoint).", "ST_Intersects(a, b)"
)
def intersects(a: BaseGeometry, b: BaseGeometry) -> bool:
    """a and b share at least one point (not disjoint).

    >>> from shapely import LineString, Point, box
    >>> intersects(box(0, 0, 1, 1), box(1, 0, 2, 1))
    True
    >>> intersects(box(0, 0, 1, 1), box(2, 0, 3, 1))
    False
    """
    return bool(a.intersects(b))


@measure(
    "touches",
    "bool",
    None,
    "The boundaries of a and b meet but their interiors do not intersect (OGC touches).",
    "ST_Touches(a, b)",
)
def touches(a: BaseGeometry, b: BaseGeometry) -> bool:
    """The boundaries of a and b meet but their interiors do not intersect (OGC touches).

    >>> from shapely import LineString, Point, box
    >>> touches(box(0, 0, 1, 1), box(1, 0, 2, 1))
    True
    >>> touches(box(0, 0, 2, 1), box(1, 0, 3, 1))
    False
    """
    return bool(a.touches(b))


@measure(
    "crosses",
    "bool",
    None,
    "OGC crosses: the interiors intersect in a geometry of lower dimension than the "
    "highest of the two, and a is not contained in b.",
    "ST_Crosses(a, b)",
)
def crosses(a: BaseGeometry, b: BaseGeometry) -> bool:
    """OGC crosses: the interiors intersect in a geometry of lower dimension than the highest of the
    two, and a is not contained in b.

    >>> from shapely import LineString, Point, box
    >>> crosses(LineString([(0, 0), (2, 0)]), box(-1, -1, 1, 1))
    True
    >>> crosses(LineString([(2, 0), (3, 0)]), box(-1, -1, 1, 1))
    False
    """
    return bool(a.crosses(b))


@measure(
    "within",
    "bool",
    None,
    "OGC within: a lies in b and their interiors intersect (T*F**F***).",
    "ST_Within(a, b)",
)
def within(a: BaseGeometry, b: BaseGeometry) -> bool:
    """OGC within: a lies in b and their interiors intersect (T*F**F***).

    >>> from shapely import LineString, Point, box
    >>> within(Point(0.5, 0.5), box(0, 0, 1, 1))
    True
    >>> within(Point(0, 0.5), box(0, 0, 1, 1))
    False
    """
    return bool(a.within(b))


@measure(
    "overlaps",
    "bool",
    None,
    "OGC overlaps: same dimension, interiors intersect, neither contains the other.",
    "ST_Overlaps(a, b)",
)
def overlaps(a: BaseGeometry, b: BaseGeometry) -> bool:
    """OGC overlaps: same dimension, interiors intersect, neither contains the other.

    >>> from shapely import LineString, Point, box
    >>> overlaps(box(0, 0, 2, 2), box(1, 1, 3, 3))
    True
    >>> overlaps(box(0, 0, 1, 1), box(0, 0, 2, 2))
    False
    """
    return bool(a.overlaps(b))


@measure(
    "covered_by",
    "bool",
    None,
    "No point of a lies outside b (T*F**F*** or *TF**F*** ...).",
    "ST_CoveredBy(a, b)",
)
def covered_by(a: BaseGeometry, b: BaseGeometry) -> bool:
    """No point of a lies outside b (T*F**F*** or *TF**F*** ...).

    >>> from shapely import LineString, Point, box
    >>> covered_by(box(0, 0, 1, 1), box(0, 0, 2, 2))
    True
    >>> covered_by(box(0, 0, 3, 1), box(0, 0, 2, 2))
    False
    """
    return bool(a.covered_by(b))


@measure(
    "boundary_covered",
    "bool",
    None,
    "Boundary coverage: a is covered by b, a touches b's boundary, and a is not equal to b.",
    "ST_CoveredBy(a, b) AND ST_Intersects(a, ST_Boundary(b)) AND NOT ST_Equals(a, b)",
)
def boundary_covered(a: BaseGeometry, b: BaseGeometry) -> bool:
    """Boundary coverage: a is covered by b, a touches b's boundary, and a is not equal to b.

    >>> from shapely import LineString, Point, box
    >>> boundary_covered(box(0, 0, 1, 1), box(0, 0, 2, 2))
    True
    >>> boundary_covered(box(0.5, 0.5, 1, 1), box(0, 0, 2, 2))
    False
    >>> boundary_covered(box(0, 0, 2, 2), box(0, 0, 2, 2))
    False
    """
    return bool(a.covered_by(b) and a.intersects(b.boundary) and not a.equals(b))


@measure(
    "contained_properly",
    "bool",
    None,
    "a lies in the interior of b (b contains a properly: no point of a on b's boundary).",
    "ST_ContainsProperly(b, a)",
)
def contained_properly(a: BaseGeometry, b: BaseGeometry) -> bool:
    """a lies in the interior of b (b contains a properly: no point of a on b's boundary).

    >>> from shapely import LineString, Point, box
    >>> contained_properly(box(0.5, 0.5, 1, 1), box(0, 0, 2, 2))
    True
    >>> contained_properly(box(0, 0, 1, 1), box(0, 0, 2, 2))
    False
    """
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
        if g.length <= 2 * eps:
            return g.interpolate(0.5, normalized=True)
        return shapely.ops.substring(g, eps, g.length - eps)
    return g


@measure(
    "equals_eps",
    "bool",
    None,
    "a and b are equal within eps: the same geometry type (a Polygon never equals a "
    "MultiPolygon, even of one part) and Hausdorff distance (segments densified to 1 %) <= eps.",
    "GeometryType(a) = GeometryType(b) AND ST_HausdorffDistance(a, b, 0.01) <= eps",
)
def equals_eps(a: BaseGeometry, b: BaseGeometry, eps: float = EDIT_EPS) -> bool:
    """a and b are equal within eps: Hausdorff distance (segments densified to 1 %).

    >>> from shapely import LineString, Point, box
    >>> equals_eps(box(0, 0, 10, 10), box(0, 0, 10, 10.04))
    True
    >>> equals_eps(box(0, 0, 10, 10), box(0, 0, 10, 10.1))
    False
    """
    return bool(a.geom_type == b.geom_type and shapely.hausdorff_distance(a, b, densify=0.01) <= eps)


@measure(
    "touches_eps",
    "bool",
    None,
    "a and b touch within eps: distance(a, b) <= eps and their interiors pulled back by eps "
    "are disjoint: a polygon buffered inwards by eps, a line cut by eps at both ends (its "
    "midpoint when it is at most 2 eps long), a point as it is.",
    "ST_DWithin(a, b, eps) AND NOT ST_Intersects(shrink(a), shrink(b)), shrink(g) = "
    "ST_Buffer(g, -eps) for a polygon, ST_LineSubstring(g, eps / ST_Length(g), 1 - eps / "
    "ST_Length(g)) for a line (ST_LineInterpolatePoint(g, 0.5) when ST_Length(g) <= 2 eps), g "
    "for a point",
)
def touches_eps(a: BaseGeometry, b: BaseGeometry, eps: float = EDIT_EPS) -> bool:
    """a and b touch within eps: distance(a, b).

    >>> from shapely import LineString, Point, box
    >>> touches_eps(box(0, 0, 10, 10), box(10.03, 0, 20, 10))
    True
    >>> touches_eps(box(0, 0, 10, 10), box(10.2, 0, 20, 10))
    False
    """
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
def boundary_covered_eps(a: BaseGeometry, b: BaseGeometry, eps: float = EDIT_EPS) -> bool:
    """a lies in b grown by eps, comes within eps of b's boundary, and is not equal to b within eps.

    >>> from shapely import LineString, Point, box
    >>> boundary_covered_eps(box(0.03, 0.03, 5, 5), box(0, 0, 10, 10))
    True
    >>> boundary_covered_eps(box(1, 1, 5, 5), box(0, 0, 10, 10))
    False
    """
    return bool(a.covered_by(b.buffer(eps)) and a.distance(b.boundary) <= eps and not equals_eps(a, b, eps))


@measure(
    "contained_properly_eps",
    "bool",
    None,
    "a lies in b's interior with at least eps clearance from b's boundary.",
    "ST_ContainsProperly(b, a) AND ST_Distance(a, ST_Boundary(b)) >= eps",
)
def contained_properly_eps(a: BaseGeometry, b: BaseGeometry, eps: float = EDIT_EPS) -> bool:
    """a lies in b's interior with at least eps clearance from b's boundary.

    >>> from shapely import LineString, Point, box
    >>> contained_properly_eps(box(1, 1, 5, 5), box(0, 0, 10, 10))
    True
    >>> contained_properly_eps(box(0.01, 1, 5, 5), box(0, 0, 10, 10))
    False
    """
    return bool(shapely.contains_properly(b, a) and a.distance(b.boundary) >= eps)


@measure(
    "crosses_eps",
    "bool",
    None,
    "a crosses b beyond eps: a crosses b (OGC crosses) and some part of their intersection (a "
    "point, or a line piece where a line crosses a polygon) lies farther than eps from every "
    "endpoint of those of a and b that are lines; with no line among them, OGC crosses alone. "
    "An end that overshoots the other line by at most eps is a connection, not a crossing "
    "(the tolerance of endpoint_connected).",
    "ST_Crosses(a, b) AND ST_Distance(ST_Intersection(a, b), "
    "ST_Collect(ARRAY[ST_StartPoint(a), ST_EndPoint(a), ST_StartPoint(b), ST_EndPoint(b)])) "
    "computed per intersection point, some > eps",
)
def crosses_eps(a: BaseGeometry, b: BaseGeometry, eps: float = EDIT_EPS) -> bool:
    """a crosses b beyond eps: a crosses b (OGC crosses).

    >>> from shapely import LineString, Point, box
    >>> crosses_eps(LineString([(0, -5), (0, 5)]), LineString([(-5, 0), (5, 0)]))
    True
    >>> crosses_eps(LineString([(0, -5), (0, 0.01)]), LineString([(-5, 0), (5, 0)]))
    False
    """
    if not a.crosses(b):
        return False
    ends = shapely.MultiPoint([g.coords[i] for g in (a, b) if g.geom_type == "LineString" for i in (0, -1)])
    if ends.is_empty:
        return True
    inter = a.intersection(b)
    parts = getattr(inter, "geoms", [inter])
    return any(p.distance(ends) > eps for p in parts if not p.is_empty)


# ---------------------------------------------------------------- batch forms (core.batch_of)
# The same shapely calls as the measures above, elementwise over an array of candidates.

for _name, _fn in (
    ("equals", shapely.equals),
    ("disjoint", shapely.disjoint),
    ("intersects", shapely.intersects),
    ("touches", shapely.touches),
    ("crosses", shapely.crosses),
    ("within", shapely.within),
    ("overlaps", shapely.overlaps),
    ("covered_by", shapely.covered_by),
):
    batch_of(_name)(_fn)


@batch_of("contained_properly")
def _contained_properly_batch(a: Geometries, b: Geometries) -> np.ndarray:
    return shapely.contains_properly(b, a)


@batch_of("equals_eps")
def _equals_eps_batch(a: Geometries, b: Geometries, eps: float = EDIT_EPS) -> np.ndarray:
    same_type = shapely.get_type_id(a) == shapely.get_type_id(b)
    return same_type & (shapely.hausdorff_distance(a, b, densify=0.01) <= eps)


@batch_of("boundary_covered_eps")
def _boundary_covered_eps_batch(a: Geometries, b: Geometries, eps: float = EDIT_EPS) -> np.ndarray | None:
    if isinstance(b, np.ndarray):  # b's buffer and boundary are computed once, for one b
        return None
    covered = shapely.covered_by(a, b.buffer(eps)) & (shapely.distance(a, b.boundary) <= eps)
    return covered & ~_equals_eps_batch(a, b, eps)


@batch_of("contained_properly_eps")
def _contained_properly_eps_batch(a: Geometries, b: Geometries, eps: float = EDIT_EPS) -> np.ndarray | None:
    if isinstance(b, np.ndarray):
        return None
    return shapely.contains_properly(b, a) & (shapely.distance(a, b.boundary) >= eps)


# ---------------------------------------------------------------- explanation drawings

INSIDE = (
    "within",
    "covered_by",
    "contained_properly",
    "contained_properly_eps",
    "boundary_covered",
    "boundary_covered_eps",
)
PREDICATES = (
    "equals",
    "disjoint",
    "intersects",
    "touches",
    "crosses",
    "overlaps",
    "equals_eps",
    "touches_eps",
    "crosses_eps",
)


@drawing_of(*PREDICATES, *INSIDE)
def draw_predicate(case: ConstraintScene) -> Drawing:
    """The shared part highlighted (or the gap measured) and what breaks the predicate."""
    args, m = case.args, case.constraint["measure"]
    if len(args) < 2:
        return draw_features(case)
    a, b = case.geom(args[0]), case.geom(args[1])
    parts: Drawing = [("reference", b)]
    inter = a.intersection(b)
    if not inter.is_empty:
        parts.append(("intersection", inter))
    elif a.distance(b) > 0:
        parts.append(("measured", shapely.shortest_line(a, b)))
    want = case.constraint.get("value")
    if m in INSIDE and want:
        parts.append(("violation", a.difference(b)))
    if m == "disjoint" and want and not inter.is_empty:
        parts.append(("violation", inter))
    if m in ("equals", "equals_eps") and want:
        parts.append(("violation", a.symmetric_difference(b)))
    return parts


# ---------------------------------------------------------------- edit seeds


@seeds_of("equals", "equals_eps")
def seed_equal(case: ConstraintScene) -> EditSeeds:
    if case.wants():
        yield move_onto(case.target_geom, ref_point(case.geom(case.others()[0])))


@seeds_of("touches", "touches_eps")
def seed_touch(case: ConstraintScene) -> EditSeeds:
    if case.wants():
        yield from contact_seeds(case.target_geom, case.geom(case.others()[0]), case.max_shift)


@seeds_of("boundary_covered", "boundary_covered_eps")
def seed_boundary_contact(case: ConstraintScene) -> EditSeeds:
    if case.wants():
        other = case.geom(case.others()[0]).boundary
        yield from contact_seeds(case.target_geom, other, case.max_shift)


@seeds_of("within", "contained_properly", "contained_properly_eps", "covered_by")
def seed_inside(case: ConstraintScene) -> EditSeeds:
    if case.wants():
        yield from inside_seeds(case.target_geom, case.geom(case.others()[0]))


@seeds_of("crosses", "crosses_eps")
def seed_cross(case: ConstraintScene) -> EditSeeds:
    g = case.target_geom
    if case.wants() and g.geom_type == "LineString":
        # An interior point of the target onto an interior point of the other's outline.
        other = outline(case.geom(case.others()[0]))
        for fa, fb in ((0.5, 0.5), (0.5, 0.3), (0.5, 0.7), (0.3, 0.5), (0.7, 0.5), (0.4, 0.6)):
            p, q = g.interpolate(fa, normalized=True), other.interpolate(fb, normalized=True)
            yield translation(q.x - p.x, q.y - p.y)
