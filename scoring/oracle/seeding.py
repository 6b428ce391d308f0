"""Moves the measures' edit seeds are made of (pure shapely; operations as a model returns them)."""

from __future__ import annotations

import math
from collections.abc import Iterable

import shapely
import shapely.ops
from shapely import affinity
from shapely.geometry import LineString, Point
from shapely.geometry.base import BaseGeometry

from scoring.geometry.pole import polylabel  # shapely.ops.polylabel, point for point, vectorised
from scoring.oracle.core import EditSeeds

# How far a contact search moves the target when the edit sets no displacement budget.
CONTACT_REACH_M = 100.0


def translation(dx: float, dy: float) -> list[dict]:
    return [{"op": "translate", "dx": round(dx, 3), "dy": round(dy, 3)}]


def move_onto(g: BaseGeometry, p: Point) -> list[dict]:
    """The translation taking g's reference point (its centroid) onto p."""
    c = g if isinstance(g, Point) else g.centroid
    return translation(p.x - c.x, p.y - c.y)


def unit_vector(dx: float, dy: float) -> tuple[float, float] | None:
    n = math.hypot(dx, dy)
    return (dx / n, dy / n) if n > 1e-9 else None


def line_ends(line: BaseGeometry) -> list[Point]:
    return [Point(line.coords[0]), Point(line.coords[-1])]


def normal_at(line: LineString, t: float) -> tuple[float, float]:
    """Unit normal pointing left of the line at distance t along it."""
    a, b = line.interpolate(max(0.0, t - 0.5)), line.interpolate(min(line.length, t + 0.5))
    u = unit_vector(b.x - a.x, b.y - a.y) or (1.0, 0.0)
    return -u[1], u[0]


def contact_seeds(g: BaseGeometry, other: BaseGeometry, max_shift: float | None) -> EditSeeds:
    """Translations that bring g within ~1 cm of `other` (first contact)."""
    p, q = shapely.ops.nearest_points(g, other)
    d = p.distance(q)
    if d > 0.02:
        s = (d - 0.01) / d
        yield translation((q.x - p.x) * s, (q.y - p.y) * s)
    # First contact along other directions, by bisection on the distance.
    for k in range(16):
        th = 2 * math.pi * k / 16
        u = (math.cos(th), math.sin(th))
        hit = first_contact(g, other, u, (max_shift or CONTACT_REACH_M))
        if hit is not None:
            yield translation(u[0] * hit, u[1] * hit)


def first_contact(
    g: BaseGeometry, other: BaseGeometry, u: tuple[float, float], limit: float, gap: float = 0.01
) -> float | None:
    """How far g moves along unit vector u before it comes within `gap` of `other` (None if it
    moves away or gets no closer within `limit`)."""

    def dist(t: float) -> float:
        return affinity.translate(g, u[0] * t, u[1] * t).distance(other)

    step, t, prev = 0.5, 0.0, dist(0.0)
    while t < limit:
        d = dist(t + step)
        if d <= gap:
            lo, hi = t, t + step
            for _ in range(30):
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if dist(mid) > gap else (lo, mid)
            return lo
        if d >= prev:  # moving away (the distance is convex along a line for convex shapes)
            return None
        t, prev = t + step, d
    return None


def inside_seeds(g: BaseGeometry, other: BaseGeometry) -> EditSeeds:
    """Translations putting g's centroid on interior points of `other`."""
    pts = []
    if other.geom_type == "Polygon":
        pts.append(polylabel(other, tolerance=0.1))
    pts += [other.centroid, other.representative_point()]
    for p in pts:
        yield move_onto(g, p)


def approach_seeds(g: BaseGeometry, other: BaseGeometry, gaps: Iterable[float]) -> EditSeeds:
    """Translations leaving each of `gaps` metres between g and `other`."""
    p, q = shapely.ops.nearest_points(g, other)
    d = p.distance(q)
    u = unit_vector(q.x - p.x, q.y - p.y)
    if u is None:
        return
    for gap in gaps:
        if d > gap:
            yield translation(u[0] * (d - gap), u[1] * (d - gap))


def scale_about_centroid(factor: float) -> list[dict]:
    return [{"op": "scale", "factor": factor, "origin": "centroid"}]
