"""Shapes the measures' explanation drawings are made of (pure shapely)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import shapely
import shapely.ops
from shapely.geometry import LineString, Point, Polygon
from shapely.geometry.base import BaseGeometry

from scoring.oracle.core import ConstraintScene, Drawing, ref_point

# Rays and sectors need a visible radius even between features a few metres apart.
MIN_RAY_M = 25.0
ARC_STEP_DEG = 2.0


def draw_features(case: ConstraintScene) -> Drawing:
    """What a measure without its own drawing shows: the features it names."""
    return [("reference", case.geoms[f]) for f in case.args if f in case.geoms]


def moving_and_fixed(args: list[str], target: str) -> tuple[str, str]:
    """(moving, fixed) among two args: the target moves, the other one is the reference."""
    a, b = args[0], args[1]
    return (b, a) if b == target else (a, b)


def limits(c: Mapping[str, Any]) -> tuple[float | None, float | None]:
    """(lower, upper) bound a numeric constraint sets; None where it sets none."""
    op = c.get("op")
    if op == "between":
        return c.get("min"), c.get("max")
    if op == "at_most":
        return None, c.get("max")
    if op == "at_least":
        return c.get("min"), None
    return None, None


def ray(origin: Point, bearing: float, length: float) -> LineString:
    r = math.radians(bearing)
    return LineString(
        [(origin.x, origin.y), (origin.x + length * math.sin(r), origin.y + length * math.cos(r))]
    )


def pie_slice(origin: Point, start: float, end: float, radius: float) -> Polygon:
    """A pie slice from bearing `start` clockwise to `end` (degrees)."""
    span = (end - start) % 360.0 or 360.0
    n = max(2, int(math.ceil(span / ARC_STEP_DEG)))
    pts = [(origin.x, origin.y)]
    for k in range(n + 1):
        r = math.radians(start + span * k / n)
        pts.append((origin.x + radius * math.sin(r), origin.y + radius * math.cos(r)))
    return Polygon(pts)


def distance_band(fixed: BaseGeometry, lo: float | None, hi: float | None, reach: float) -> BaseGeometry:
    """The region at a distance in [lo, hi] from `fixed` (hi None: up to `reach`)."""
    outer = fixed.buffer(hi if hi is not None else reach, quad_segs=16)
    if lo and lo > 0:
        return outer.difference(fixed.buffer(lo, quad_segs=16))
    return outer


def limit_rings(fixed: BaseGeometry, *dists: float | None) -> Drawing:
    return [("limit", fixed.buffer(d, quad_segs=16).boundary) for d in dists if d is not None and d > 0]


def view_radius(*geoms: BaseGeometry) -> float:
    """A ray length that spans the features' reference points with room to spare."""
    pts = [ref_point(g) for g in geoms]
    span = max((p.distance(q) for p in pts for q in pts), default=0.0)
    return max(MIN_RAY_M, 1.3 * span)


def diamond(p: Point, r: float) -> Polygon:
    """The points within Manhattan distance r of p."""
    return Polygon([(p.x + r, p.y), (p.x, p.y + r), (p.x - r, p.y), (p.x, p.y - r)])


def hausdorff_segment(a: BaseGeometry, b: BaseGeometry) -> LineString | None:
    """The segment realising the (densified) Hausdorff distance: the vertex of either geometry
    farthest from the other, joined to its nearest point there."""
    best = None
    for g, other in ((a, b), (b, a)):
        step = max(g.length / 100.0, 0.01) if g.length > 0 else None
        dense = shapely.segmentize(g, step) if step else g
        for xy in shapely.get_coordinates(dense):
            p = Point(xy)
            d = p.distance(other)
            if best is None or d > best[0]:
                best = (d, p, other)
    if best is None or best[0] == 0:
        return None
    _, p, other = best
    return shapely.shortest_line(p, other)


def side_strip(line: LineString, side: str, width: float) -> BaseGeometry:
    """The strip of width `width` on one side of a directed line (left: positive buffer)."""
    d = width if side == "left" else -width
    return line.buffer(d, single_sided=True)


def line_stretch(line: LineString, start: float, end: float) -> BaseGeometry:
    """The part of `line` between two distances along it."""
    return shapely.ops.substring(line, start, end)
