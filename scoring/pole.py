"""The pole of inaccessibility of a polygon (where a label sits, where an edit seed aims), as
shapely.ops.polylabel finds it, point for point, at a fraction of the cost.

shapely's polylabel measures each grid cell with three Python-level GEOS calls (a Point, a
contains, a distance per ring); a map's label placement spent most of its time there. Here the
cells of each step (the initial grid, then the four quadrants of a split cell, together with those
of the cells likely to be split next) are measured in one vectorised call each. The queue, its
order and every distance are those of shapely's algorithm (the same GEOS predicates on the same
coordinates), so the labels land on the same pixels.
"""

from __future__ import annotations

from heapq import heappop, heappush
from typing import Any

import numpy as np
import shapely
from shapely import lib
from shapely.errors import TopologicalError
from shapely.geometry import Point

_SQRT2 = 1.4142135623730951


class _Cell(float):
    """A cell whose value is minus its max_distance: the heap compares cells as floats (in C),
    and `a < b` is then exactly shapely's Cell `a.max_distance > b.max_distance`, ties included
    (negation is exact), so the queue pops in the same order."""

    __slots__ = ("x", "y", "h", "distance", "quadrants")
    x: float
    y: float
    h: float  # half the cell's side
    distance: float  # signed distance from the centre to the outline
    quadrants: list[float] | None  # the distances of its four quadrants' centres, once measured

    def __new__(cls, x: float, y: float, h: float, distance: float) -> _Cell:
        cell = super().__new__(cls, -(distance + h * _SQRT2))
        cell.x, cell.y, cell.h, cell.distance, cell.quadrants = x, y, h, distance, None
        return cell

    @property
    def max_distance(self) -> float:
        return -float(self)


def _signed_distances(polygon: Any, rings: list[Any], xs: list[float], ys: list[float]) -> list[float]:
    """Per point: its distance to the nearest ring, negative outside the polygon. Straight to
    shapely's GEOS ufuncs (what shapely.points / contains / distance call): the polygons are
    small (~20 vertices), so the Python wrappers around each call cost more than GEOS."""
    pts = lib.points(np.array((xs, ys), dtype=float).T)
    inside = lib.contains(polygon, pts)
    d = lib.distance(pts, rings[0])
    for ring in rings[1:]:
        d = np.minimum(d, lib.distance(pts, ring))
    return np.where(inside, d, -d).tolist()  # negation is exact: -0.0 outside, as -v gives


def polylabel(polygon: Any, tolerance: float = 1.0) -> Point:
    """shapely.ops.polylabel(polygon, tolerance): same point, same errors."""
    if not polygon.is_valid:
        raise TopologicalError("Invalid polygon")
    rings = [polygon.exterior, *polygon.interiors]
    # A prepared copy answers `contains` for points from an index: the same robust ray-crossing
    # test (so the same answer, boundary points included), without rebuilding the polygon's
    # topology for every call; the caller's polygon is left as it was.
    polygon = shapely.from_wkb(shapely.to_wkb(polygon))
    shapely.prepare(polygon)
    minx, miny, maxx, maxy = polygon.bounds
    width = maxx - minx
    height = maxy - miny
    cell_size = min(width, height)
    h = cell_size / 2.0

    cx, cy = polygon.centroid.coords[0]
    bx, by = minx + width / 2.0, miny + height / 2
    d_centroid, d_bbox = _signed_distances(polygon, rings, [cx, bx], [cy, by])
    best = _Cell(cx, cy, 0, d_centroid)
    if d_bbox > best.distance:  # rectangles: the box centre avoids a centroid's rounding
        best = _Cell(bx, by, 0, d_bbox)

    grid_x, grid_y = [], []
    x = minx
    while x < maxx:
        y = miny
        while y < maxy:
            grid_x.append(x + h)
            grid_y.append(y + h)
            y += cell_size
        x += cell_size
    queue: list[_Cell] = []
    for gx, gy, d in zip(grid_x, grid_y, _signed_distances(polygon, rings, grid_x, grid_y), strict=True):
        heappush(queue, _Cell(gx, gy, h, d))

    while queue:
        cell = heappop(queue)
        if cell.distance > best.distance:
            best = cell
        if cell.max_distance - best.distance <= tolerance:
            continue
        h = cell.h / 2.0
        if cell.quadrants is None:
            _measure_quadrants(polygon, rings, [cell, *_likely_next(queue, best.distance + tolerance)])
        assert cell.quadrants is not None
        qx = (cell.x - h, cell.x + h, cell.x - h, cell.x + h)
        qy = (cell.y - h, cell.y - h, cell.y + h, cell.y + h)
        for x, y, d in zip(qx, qy, cell.quadrants, strict=True):
            heappush(queue, _Cell(x, y, h, d))
    return Point(best.x, best.y)


# Cells near the top of the queue whose quadrants are measured with the popped cell's, in one
# GEOS call: most of them are split soon after. Distances are per point, whatever the batch, so
# the queue and the result are unchanged; only the number of calls (~40 us each) drops.
_LOOKAHEAD = 15  # the heap's first four levels


def _likely_next(queue: list[_Cell], bar: float) -> list[_Cell]:
    """Unmeasured cells among the first of the heap that would be split if popped now."""
    return [c for c in queue[:_LOOKAHEAD] if c.quadrants is None and -float(c) > bar]


def _measure_quadrants(polygon: Any, rings: list[Any], cells: list[_Cell]) -> None:
    xs: list[float] = []
    ys: list[float] = []
    for c in cells:
        h = c.h / 2.0
        xs += (c.x - h, c.x + h, c.x - h, c.x + h)
        ys += (c.y - h, c.y - h, c.y + h, c.y + h)
    d = _signed_distances(polygon, rings, xs, ys)
    for i, c in enumerate(cells):
        c.quadrants = d[4 * i : 4 * i + 4]
