"""Collision-avoiding placement of feature labels and of map furniture, in pixel space.

Pixel space: x = column, y = row (rows grow downwards), boxes are (x0, y0, x1, y1) with
x0 < x1 and y0 < y1. Everything is deterministic: candidates are generated in a fixed order and
ties are broken by that order.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import shapely
from shapely import lib
from shapely.geometry import LineString, box

from scoring.geometry.pole import polylabel  # shapely.ops.polylabel, point for point, vectorised
from scoring.render.labels.obstacles import CandidateTests, MapObstacles, is_large_polygon

Box = tuple[float, float, float, float]

# (name, unit direction x, unit direction y [down positive], preference penalty)
_D = math.sqrt(0.5)
DIRECTIONS = [
    ("E", 1.0, 0.0, 0.0),
    ("NE", _D, -_D, 1.0),
    ("SE", _D, _D, 1.5),
    ("W", -1.0, 0.0, 2.0),
    ("NW", -_D, -_D, 2.5),
    ("SW", -_D, _D, 3.0),
    ("N", 0.0, -1.0, 3.5),
    ("S", 0.0, 1.0, 4.0),
]
RING_STEPS = (2.0, 9.0, 20.0, 36.0, 60.0, 95.0, 140.0, 200.0)
DISPLACED_STEP = 20.0  # beyond clearance + this many px a label gets a leader line
CANDIDATE_BATCH = 64  # candidates tested together (vectorised) while searching the cheapest ...
FIRST_BATCH = 8  # ... after a first few, which hold the place taken on most maps


@dataclass
class LabelItem:
    fid: str
    geom: Any  # shapely geometry in pixel space
    size: tuple[float, float]  # label box width, height (px)
    clearance: float  # half the drawn stroke / marker size + margin (px)


@dataclass
class Placement:
    fid: str
    bbox: Box
    anchor: tuple[float, float]
    displaced: bool
    leader: list[list[float]] | None
    fallback: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "bbox": [round(v, 2) for v in self.bbox],
            "anchor": [round(v, 2) for v in self.anchor],
            "displaced": self.displaced,
            "leader": [[round(v, 2) for v in p] for p in self.leader] if self.leader else None,
            "fallback": self.fallback,
        }


def obstacle_for(geom, clearance: float):
    """What a label must not touch: the drawn feature, or only the outline of a large polygon."""
    if is_large_polygon(geom):
        return geom.boundary.buffer(clearance, quad_segs=4)
    return geom.buffer(clearance, quad_segs=4)


_POLYGON_FRACS = np.array((0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875))
_LINE_FRACS = np.array((0.5, 0.35, 0.65, 0.2, 0.8, 0.08, 0.92))
_POLYGON_PEN = np.array([0.0] + [4.0] * len(_POLYGON_FRACS))
_LINE_PEN = 2.0 * np.arange(len(_LINE_FRACS))


def _anchors(geom) -> tuple[np.ndarray, np.ndarray]:
    """Candidate anchor points (n x 2) and their preference penalties: a point's own, a
    polygon's inside point then 8 points along its outline, 7 points along a line (each
    series interpolated in one call)."""
    gt = geom.geom_type
    if gt in ("Point", "MultiPoint"):
        p = geom if gt == "Point" else geom.geoms[0]
        return np.array([[p.x, p.y]]), np.zeros(1)
    if gt in ("Polygon", "MultiPolygon"):
        p = inside_point(geom)
        along = shapely.line_interpolate_point(geom.boundary, _POLYGON_FRACS, normalized=True)
        return np.vstack([[[p.x, p.y]], shapely.get_coordinates(along)]), _POLYGON_PEN
    along = shapely.line_interpolate_point(geom, _LINE_FRACS, normalized=True)
    return shapely.get_coordinates(along), _LINE_PEN


def anchor_points(geom) -> list[tuple[tuple[float, float], float]]:
    """Candidate anchor points with a small preference penalty each."""
    xy, pen = _anchors(geom)
    return [((float(x), float(y)), float(p)) for (x, y), p in zip(xy, pen, strict=True)]


def inside_point(geom):
    """A point inside a polygon, far from its outline: the pole of inaccessibility of its largest
    part (a thin curved polygon's centroid can lie outside it)."""
    part = max(getattr(geom, "geoms", [geom]), key=lambda g: g.area)
    shapely.prepare(part)  # (in place: polylabel then needs no prepared copy)
    try:
        p = polylabel(part, tolerance=0.5)
    except (ValueError, shapely.errors.GEOSException):
        p = None
    return p if p is not None and part.contains(p) else part.representative_point()


_RING = np.repeat(np.asarray(RING_STEPS, dtype=float), len(DIRECTIONS))  # ring by ring ...
_UX = np.tile([d[1] for d in DIRECTIONS], len(RING_STEPS))  # ... each in direction order
_UY = np.tile([d[2] for d in DIRECTIONS], len(RING_STEPS))
_DPEN = np.tile([d[3] for d in DIRECTIONS], len(RING_STEPS))
_DISPLACED = _RING > DISPLACED_STEP
_RING_COST = _RING + _DPEN  # the first two terms of every candidate's cost, in that order


def _candidates(item: LabelItem):
    """Rows (x0, y0, anchor x, anchor y, distance, cost, displaced) of an item's candidate
    boxes: per anchor, the centred box (large polygons), then ring by ring, direction by
    direction. Vectorised with the very float operations, in the same order, of a loop."""
    w, h = item.size
    xy, pen = _anchors(item.geom)
    ax, ay = xy[:, :1], xy[:, 1:]  # one row per anchor, one column per (ring, direction)
    d = item.clearance + _RING
    rows = np.empty((len(xy), len(d), 7))
    rows[:, :, 0] = np.where(_UX > 0.1, ax + d * _UX, np.where(_UX < -0.1, ax + d * _UX - w, ax - w / 2))
    rows[:, :, 1] = np.where(_UY > 0.1, ay + d * _UY, np.where(_UY < -0.1, ay + d * _UY - h, ay - h / 2))
    rows[:, :, 2] = ax
    rows[:, :, 3] = ay
    rows[:, :, 4] = d
    rows[:, :, 5] = _RING_COST + pen[:, None] + np.where(_DISPLACED, 12.0, 0.0)
    rows[:, :, 6] = _DISPLACED
    rows = rows.reshape(-1, 7)
    if is_large_polygon(item.geom):  # first, the box centred on the anchor inside the polygon
        (x, y), p = xy[0], pen[0]
        rows = np.vstack([[[x - w / 2, y - h / 2, x, y, 0.0, p + 6.0, 0.0]], rows])
    return rows


def place_labels(
    items: Sequence[LabelItem],
    bounds: Box,
    obstacles: dict[str, Any],
    blocked: Sequence[Box] = (),
    soft_polygons: dict[str, Any] | None = None,
) -> dict[str, Placement]:
    """Place one label per item, in order, avoiding every obstacle, each other and `blocked`.

    obstacles: feature id -> pixel geometry labels must not touch (all features, own included).
    soft_polygons: feature id -> large polygon whose interior labels of OTHER features should
    avoid if they can (penalty only).

    Each label takes the cheapest free candidate (ties: the first generated); only when none
    is free are all candidates tested, to minimise the damage.
    """
    index = MapObstacles(obstacles, soft_polygons or {})
    placed: dict[str, Placement] = {}
    placed_boxes: list[Box] = list(blocked)
    leaders: list[LineString] = []
    bx0, by0, bx1, by1 = bounds
    for item in items:
        w, h = item.size
        c = _candidates(item)
        x0, y0 = c[:, 0], c[:, 1]
        x1, y1 = x0 + w, y0 + h
        inside = (x0 >= bx0) & (y0 >= by0) & (x1 <= bx1) & (y1 <= by1)
        tests = CandidateTests(item, c, (x0, y0, x1, y1), index, placed_boxes, list(leaders))
        choice = _cheapest_free(tests, c, np.flatnonzero(inside), w, h)
        fallback = choice is None
        if choice is None:
            # relax: keep inside the bounds and off the labelled feature; minimise the damage
            every = np.arange(len(c))
            hit_own, hit_others, hit_labels = tests.hits(every)
            penalty = (
                tests.cost(every)
                + 1000.0 * hit_others
                + 2000.0 * hit_labels
                + 4000.0 * hit_own
                + 8000.0 * ~inside
            )
            choice = int(np.argmin(penalty))
        i = choice
        bb = (float(x0[i]), float(y0[i]), float(x0[i] + w), float(y0[i] + h))
        anchor = (float(c[i, 2]), float(c[i, 3]))
        displaced = bool(c[i, 6] > 0)
        leader = None
        if displaced:
            seg = _leader(anchor[0], anchor[1], tests.boxes(np.array([i]))[0])
            leader = [list(map(float, seg[0])), list(map(float, seg[1]))]
            leaders.append(LineString(seg))
        placed[item.fid] = Placement(item.fid, bb, anchor, displaced, leader, fallback)
        placed_boxes.append(bb)
    return placed


def _cheapest_free(tests: CandidateTests, c: np.ndarray, idx: np.ndarray, w: float, h: float) -> int | None:
    """The free candidate of least (cost, index) among idx, or None. Candidates are tested in
    batches by their base cost, a lower bound of their cost, until no untested one can win:
    on most maps a label takes the very first candidate, so the first batches are small."""
    order = idx[np.argsort(c[idx, 5], kind="stable")]
    best: tuple[float, int] | None = None
    start = 0
    for size in _batch_sizes(len(order)):
        batch = order[start : start + size]
        start += size
        if best is not None:
            if c[batch[0], 5] > best[0]:
                break
            batch = batch[c[batch, 5] <= best[0]]  # the others cost more than best already
        free = batch[tests.free(batch)]
        if len(free):
            best = _cheapest_of(tests, c, free, w, h, best)
    return None if best is None else best[1]


def _batch_sizes(n: int):
    """FIRST_BATCH, then doubling up to CANDIDATE_BATCH, until n candidates are covered."""
    size, done = FIRST_BATCH, 0
    while done < n:
        yield size
        done += size
        size = min(2 * size, CANDIDATE_BATCH)


def _cheapest_of(
    tests: CandidateTests, c: np.ndarray, free: np.ndarray, w: float, h: float, best: tuple[float, int] | None
) -> tuple[float, int] | None:
    """best, or the free candidate of least (cost, index) below it whose leader (if any) is
    clear. A candidate whose nearness to other features is unsure enters at its cost without
    the nearness penalty (a lower bound) and is settled only if it comes first."""
    near, unsure = tests.near_bounds(free)
    soft = tests.soft_hits(free)
    cost = tests.cost_of(c[free, 5], near, soft)
    queue = [(float(cost[j]), int(free[j]), j) for j in np.lexsort((free, cost))]
    while queue:
        key_cost, i, j = heapq.heappop(queue)  # (sorted, the queue is a heap)
        key = (key_cost, i)
        if best is not None and key >= best:
            break
        if unsure[j]:
            unsure[j] = False
            if tests.near_exact(free[j : j + 1])[0]:
                exact = tests.cost_of(c[free[j : j + 1], 5], np.ones(1, bool), [s[j : j + 1] for s in soft])
                heapq.heappush(queue, (float(exact[0]), i, j))
                continue
        if not c[i, 6] or not tests.leader_crosses(i, w, h):
            return key
    return best


def _prepared(geom):
    """geom with a prepared GEOS index (in place): same predicate results, much faster when
    tested against many candidate boxes."""
    shapely.prepare(geom)
    return geom


def _leader(ax: float, ay: float, b) -> list[tuple[float, float]]:
    """Anchor -> nearest point of the label box."""
    x0, y0, x1, y1 = b.bounds
    return [(ax, ay), (min(max(ax, x0), x1), min(max(ay, y0), y1))]


def place_box(
    size: tuple[float, float],
    slots: Sequence[tuple[float, float]],
    obstacles,
    blocked: Sequence[Box],
    bounds: Box,
    near: tuple[float, float] | None = None,
) -> Box:
    """Choose a slot (top-left corners, in preference order) for a w x h panel: the first one
    touching neither obstacles nor blocked boxes; otherwise the one overlapping them least.
    With `near`, free slots are ranked by distance to that point instead of by order."""
    w, h = size
    corners = []
    for x0, y0 in slots:  # Python numbers, as given: the chosen box is returned as such
        corners.append((min(max(x0, bounds[0]), bounds[2] - w), min(max(y0, bounds[1]), bounds[3] - h)))
    xy = np.array(corners, dtype=float).reshape(-1, 2)
    x0s, y0s = xy[:, 0], xy[:, 1]
    x1s, y1s = x0s + w, y0s + h
    boxes = lib.box(x0s, y0s, x1s, y1s, True)
    overlap = np.zeros(len(corners))
    # an overlap is measured only where a prepared test finds one: the rest is exactly 0
    if obstacles is not None and not obstacles.is_empty:
        hit = lib.intersects(_prepared(obstacles), boxes)
        if hit.any():
            overlap[hit] += lib.area(lib.intersection(boxes[hit], obstacles))
    if blocked:
        # each blocked box grown by 6 px (what a mitred buffer of a box is); a slot touches
        # their union where it touches one of them
        grown = np.asarray(blocked, dtype=float).reshape(-1, 4) + (-6.0, -6.0, 6.0, 6.0)
        hit = (
            (x0s[:, None] <= grown[:, 2])
            & (grown[:, 0] <= x1s[:, None])
            & (y0s[:, None] <= grown[:, 3])
            & (grown[:, 1] <= y1s[:, None])
        ).any(axis=1)
        if hit.any():
            blk = shapely.union_all(shapely.box(*grown.T))
            overlap[hit] += 10.0 * lib.area(lib.intersection(boxes[hit], blk))
    best_key = None
    best: Box = (0.0, 0.0, w, h)  # replaced by the first slot: `slots` is never empty
    for order, ((x0, y0), ov) in enumerate(zip(corners, overlap.tolist(), strict=True)):
        rank = order if near is None else math.hypot(x0 + w / 2 - near[0], y0 + h / 2 - near[1])
        key = (ov, rank, order)
        if best_key is None or key < best_key:
            best, best_key = (x0, y0, x0 + w, y0 + h), key
    return best


def boxes_overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def hidden_area(bb: Box, task_union, blocked: list[Box]) -> float:
    """What a panel at bb hides: the task geometry it covers, plus 10 x the blocked boxes it
    overlaps. An overlay is computed only where there is one: the others' areas are exactly 0
    (nothing, or a shared edge), and adding 0.0 changes no sum."""
    b = box(*bb)
    hidden = b.intersection(task_union).area if shapely.intersects(task_union, b) else 0.0
    return hidden + 10.0 * sum(b.intersection(box(*o)).area for o in blocked if boxes_overlap(bb, o))
