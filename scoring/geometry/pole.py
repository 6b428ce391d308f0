"""The pole of inaccessibility of a polygon (where a label sits, where an edit seed aims), as
shapely.ops.polylabel finds it, point for point, at a fraction of the cost.

shapely's polylabel measures each grid cell with three Python-level GEOS calls (a Point, a
contains, a distance per ring); a map's label placement spent most of its time there. Here the
cells of each step (the initial grid, then the four quadrants of a split cell, together with those
of the cells likely to be split next) are measured in one vectorised call each. Every distance
is shapely's (the same GEOS predicates on the same coordinates), and the cells are split in
shapely's order; only the cells that can change nothing skip the queue (see _search), so the
labels land on the same pixels.
"""

from __future__ import annotations

from heapq import heappop, heappush
from typing import Any

import numpy as np
import shapely
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


def _signed_distances(polygon: Any, outline: Any, xs: list[float], ys: list[float]) -> list[float]:
    """Per point: its distance to the nearest ring, negative outside the polygon. One vectorised
    call of shapely's public API per measure for all points (shapely.lib is private and changed
    in shapely 2.1+); the same GEOS predicates on the same coordinates, so the same values."""
    pts = shapely.points(np.array((xs, ys), dtype=float).T)
    inside = shapely.contains(polygon, pts)
    # one call for all rings (a polygon's boundary): GEOS takes the least of the very
    # point-to-segment distances that one call per ring gives
    d = shapely.distance(pts, outline)
    return np.where(inside, d, -d).tolist()  # negation is exact: -0.0 outside, as -v gives


# The first cells: their centres (xs, ys) and signed distances.
_Grid = tuple[list[float], list[float], list[float]]


def polylabel(polygon: Any, tolerance: float = 1.0) -> Point:
    """shapely.ops.polylabel(polygon, tolerance): same point, same errors."""
    if not polygon.is_valid:
        raise TopologicalError("Invalid polygon")
    outline = polygon.exterior if not polygon.interiors else polygon.boundary
    # A prepared polygon answers `contains` for points from an index: the same robust
    # ray-crossing test (so the same answer, boundary points included), without rebuilding the
    # polygon's topology for every call. The caller's polygon is left as it was: prepared
    # already, or copied to be prepared.
    if not shapely.is_prepared(polygon):
        polygon = shapely.from_wkb(shapely.to_wkb(polygon))
        shapely.prepare(polygon)
    minx, miny, maxx, maxy = polygon.bounds
    width = maxx - minx
    height = maxy - miny
    cell_size = min(width, height)
    h = cell_size / 2.0

    cx, cy = polygon.centroid.coords[0]
    bx, by = minx + width / 2.0, miny + height / 2
    d_centroid, d_bbox = _signed_distances(polygon, outline, [cx, bx], [cy, by])
    best = _Cell(cx, cy, 0, d_centroid)
    if d_bbox > best.distance:  # rectangles: the box centre avoids a centroid's rounding
        best = _Cell(bx, by, 0, d_bbox)

    grid_x: list[float] = []
    grid_y: list[float] = []
    x = minx
    while x < maxx:
        y = miny
        while y < maxy:
            grid_x.append(x + h)
            grid_y.append(y + h)
            y += cell_size
        x += cell_size
    grid = (grid_x, grid_y, _signed_distances(polygon, outline, grid_x, grid_y))
    found = _search(polygon, outline, grid, h, best, tolerance)
    if found is None:  # two live cells of one priority: the heap's layout orders them
        found = _search_cells(polygon, outline, grid, h, best, tolerance)
    return Point(*found)


def _search(
    polygon: Any, outline: Any, grid: _Grid, h: float, best: _Cell, tolerance: float
) -> tuple[float, float] | None:
    """shapely's search, without the cells that can change nothing: a cell whose max_distance
    is within the tolerance of the best distance when it is made, and whose distance does not
    exceed it, is never split and never best (the best distance only grows), so it is not
    queued. The others are queued as plain priorities (minus max_distance, each the key of
    its cell), which pop in the same order as shapely's cells as long as no two live cells
    share one: when two do, heapq's order among them is its layout's, and None is returned
    (the caller then runs the search that queues every cell, as shapely does)."""
    bx, by, bd = best.x, best.y, best.distance
    queue: list[float] = []
    cells: dict[float, list] = {}  # priority -> [x, y, h, distance, quadrants' distances]
    for gx, gy, d in zip(*grid, strict=True):
        top = d + h * _SQRT2
        if top - bd <= tolerance and not d > bd:
            continue
        if -top in cells:
            return None
        cells[-top] = [gx, gy, h, d, None]
        heappush(queue, -top)
    while queue:
        key = heappop(queue)
        cell = cells.pop(key)
        x, y, ch, d, quadrants = cell
        if d > bd:
            bx, by, bd = x, y, d
        if -key - bd <= tolerance:
            continue
        h = ch / 2.0
        if quadrants is None:
            bar = bd + tolerance
            ahead = [
                c
                for c in map(cells.__getitem__, queue[:_LOOKAHEAD])
                if c[4] is None and c[3] + c[2] * _SQRT2 > bar
            ]
            _measure_quadrants(polygon, outline, [cell, *ahead])
            quadrants = cell[4]
        for qx, qy, qd in zip(
            (x - h, x + h, x - h, x + h), (y - h, y - h, y + h, y + h), quadrants, strict=True
        ):
            top = qd + h * _SQRT2
            if top - bd <= tolerance and not qd > bd:
                continue
            if -top in cells:
                return None
            cells[-top] = [qx, qy, h, qd, None]
            heappush(queue, -top)
    return bx, by


def _search_cells(
    polygon: Any, outline: Any, grid: _Grid, h: float, best: _Cell, tolerance: float
) -> tuple[float, float]:
    """shapely's search as it is: every cell queued (see _search)."""
    queue: list[_Cell] = []
    for gx, gy, d in zip(*grid, strict=True):
        heappush(queue, _Cell(gx, gy, h, d))

    while queue:
        cell = heappop(queue)
        if cell.distance > best.distance:
            best = cell
        if cell.max_distance - best.distance <= tolerance:
            continue
        h = cell.h / 2.0
        if cell.quadrants is None:
            _measure_quadrants(polygon, outline, [cell, *_likely_next(queue, best.distance + tolerance)])
        assert cell.quadrants is not None
        qx = (cell.x - h, cell.x + h, cell.x - h, cell.x + h)
        qy = (cell.y - h, cell.y - h, cell.y + h, cell.y + h)
        for x, y, d in zip(qx, qy, cell.quadrants, strict=True):
            heappush(queue, _Cell(x, y, h, d))
    return best.x, best.y


# Cells near the top of the queue whose quadrants are measured with the popped cell's, in one
# GEOS call: most of them are split soon after. Distances are per point, whatever the batch, so
# the queue and the result are unchanged; only the number of calls (~40 us each) drops.
_LOOKAHEAD = 15  # the heap's first four levels


def _likely_next(queue: list[_Cell], bar: float) -> list[_Cell]:
    """Unmeasured cells among the first of the heap that would be split if popped now."""
    return [c for c in queue[:_LOOKAHEAD] if c.quadrants is None and -float(c) > bar]


def _measure_quadrants(polygon: Any, outline: Any, cells: list) -> None:
    """The distances of the quadrants' centres of cells (_Cell objects, or the [x, y, h,
    distance, quadrants] lists of _search), in one GEOS call."""
    xs: list[float] = []
    ys: list[float] = []
    for c in cells:
        x, y, h = (c.x, c.y, c.h / 2.0) if isinstance(c, _Cell) else (c[0], c[1], c[2] / 2.0)
        xs += (x - h, x + h, x - h, x + h)
        ys += (y - h, y - h, y + h, y + h)
    d = _signed_distances(polygon, outline, xs, ys)
    for i, c in enumerate(cells):
        if isinstance(c, _Cell):
            c.quadrants = d[4 * i : 4 * i + 4]
        else:
            c[4] = d[4 * i : 4 * i + 4]
