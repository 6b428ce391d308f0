"""Collision-avoiding placement of feature labels and of map furniture, in pixel space.

Pixel space: x = column, y = row (rows grow downwards), boxes are (x0, y0, x1, y1) with
x0 < x1 and y0 < y1. Everything is deterministic: candidates are generated in a fixed order and
ties are broken by that order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import shapely
from shapely.geometry import LineString, box

from scoring.pole import polylabel  # shapely.ops.polylabel, point for point, vectorised

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
LARGE_POLYGON_PX2 = 12000.0  # polygons larger than this may carry labels over their interior
MAX_POLYGON_COVER = 0.08  # ... as long as the label covers at most this share of the polygon
CANDIDATE_BATCH = 64  # candidates tested together (vectorised) while searching the cheapest


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


def is_large_polygon(geom) -> bool:
    return geom.geom_type in ("Polygon", "MultiPolygon") and geom.area >= LARGE_POLYGON_PX2


def obstacle_for(geom, clearance: float):
    """What a label must not touch: the drawn feature, or only the outline of a large polygon."""
    if is_large_polygon(geom):
        return geom.boundary.buffer(clearance, quad_segs=4)
    return geom.buffer(clearance, quad_segs=4)


def anchor_points(geom) -> list[tuple[tuple[float, float], float]]:
    """Candidate anchor points with a small preference penalty each."""
    gt = geom.geom_type
    if gt == "Point":
        return [((geom.x, geom.y), 0.0)]
    if gt == "MultiPoint":
        p = geom.geoms[0]
        return [((p.x, p.y), 0.0)]
    if gt in ("Polygon", "MultiPolygon"):
        line = geom.boundary
        fracs = (0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875)
        p = inside_point(geom)
        out = [((p.x, p.y), 0.0)]
        for f in fracs:
            p = line.interpolate(f, normalized=True)
            out.append(((p.x, p.y), 4.0))
        return out
    # lines
    line_fracs = (0.5, 0.35, 0.65, 0.2, 0.8, 0.08, 0.92)
    out = []
    for i, f in enumerate(line_fracs):
        p = geom.interpolate(f, normalized=True)
        out.append(((p.x, p.y), 2.0 * i))
    return out


def inside_point(geom):
    """A point inside a polygon, far from its outline: the pole of inaccessibility of its largest
    part (a thin curved polygon's centroid can lie outside it)."""
    part = max(getattr(geom, "geoms", [geom]), key=lambda g: g.area)
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
    anchors = anchor_points(item.geom)
    centred = is_large_polygon(item.geom)  # centred on the anchor inside a large polygon
    d = item.clearance + _RING
    blocks = []
    for ai, ((ax, ay), apen) in enumerate(anchors):
        if ai == 0 and centred:
            blocks.append(np.array([[ax - w / 2, ay - h / 2, ax, ay, 0.0, apen + 6.0, 0.0]]))
        x0 = np.where(_UX > 0.1, ax + d * _UX, np.where(_UX < -0.1, ax + d * _UX - w, ax - w / 2))
        y0 = np.where(_UY > 0.1, ay + d * _UY, np.where(_UY < -0.1, ay + d * _UY - h, ay - h / 2))
        cost = _RING_COST + apen + np.where(_DISPLACED, 12.0, 0.0)
        blocks.append(
            np.column_stack([x0, y0, np.full_like(d, ax), np.full_like(d, ay), d, cost, _DISPLACED])
        )
    return np.concatenate(blocks)


class _CandidateTests:
    """The collision tests of one item's candidate boxes, computed for a subset of them only:
    most candidates of a map never need testing once a cheaper one is known to be free."""

    def __init__(self, item, c, corners, obstacles, placed_boxes, leaders, soft_polygons):
        self.item, self.c, self.corners = item, c, corners
        # the candidate boxes, each made when first tested: most are never tested
        self._boxes = np.empty(len(c), dtype=object)
        self._made = np.zeros(len(c), dtype=bool)
        others = [obstacles[k] for k in obstacles if k != item.fid]
        # each union is tested against a few hundred candidate boxes: prepare it once
        self.others_u = _prepared(shapely.union_all(others)) if others else None
        own = obstacles.get(item.fid)
        self.own = _prepared(own) if own is not None else None
        # each box grown by 3 px (what a mitred buffer of a box is)
        grown = np.asarray(placed_boxes, dtype=float).reshape(-1, 4) + (-3.0, -3.0, 3.0, 3.0)
        self.placed = _prepared(shapely.union_all(shapely.box(*grown.T))) if placed_boxes else None
        self.leaders = shapely.union_all(leaders) if leaders else None
        self.soft = [poly for k, poly in soft_polygons.items() if k != item.fid]
        self.near = None

    def boxes(self, idx: np.ndarray) -> np.ndarray:
        """The boxes of candidates idx (shapely Polygons)."""
        new = idx[~self._made[idx]]
        if len(new):
            x0, y0, x1, y1 = self.corners
            self._boxes[new] = shapely.box(x0[new], y0[new], x1[new], y1[new])
            self._made[new] = True
        return self._boxes[idx]

    def _hit(self, geom, idx: np.ndarray) -> np.ndarray:
        return shapely.intersects(self.boxes(idx), geom) if geom is not None else np.zeros(len(idx), bool)

    def hits(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(own feature, other features, placed labels and furniture) hit by boxes idx."""
        hit_own = self._hit(self.own, idx)
        geom = self.item.geom
        if is_large_polygon(geom):
            # covering too much of its own polygon counts as hitting it (only tested where
            # the box is clear of the outline, hence inside or outside the polygon)
            free = idx[~hit_own]
            cover = shapely.area(shapely.intersection(self.boxes(free), geom)) / geom.area
            hit_own[~hit_own] = cover > MAX_POLYGON_COVER
        return hit_own, self._hit(self.others_u, idx), self._hit(self.placed, idx)

    def cost(self, idx: np.ndarray) -> np.ndarray:
        cost = self.c[idx, 5].copy()
        if self.others_u is not None:
            # prefer positions that are not right next to another feature (ambiguous labels)
            if self.near is None:
                self.near = _prepared(self.others_u.buffer(16, quad_segs=2))
            cost += 15.0 * shapely.intersects(self.boxes(idx), self.near)
        for poly in self.soft:
            cost += 25.0 * shapely.intersects(self.boxes(idx), poly)
        return cost

    def leader_crosses(self, i: int, w: float, h: float) -> bool:
        """Whether the leader of displaced candidate i crosses a label or another feature."""
        ax_, ay_, x0, y0 = self.c[i, 2], self.c[i, 3], self.c[i, 0], self.c[i, 1]
        end = (np.clip(ax_, x0, x0 + w), np.clip(ay_, y0, y0 + h))
        lg = shapely.linestrings(np.array([[[ax_, ay_], end]]))
        return any(
            bool(shapely.intersects(lg, g)[0])
            for g in (self.placed, self.others_u, self.leaders)
            if g is not None
        )


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
    soft_polygons = soft_polygons or {}
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
        tests = _CandidateTests(item, c, (x0, y0, x1, y1), obstacles, placed_boxes, leaders, soft_polygons)
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


def _cheapest_free(tests: _CandidateTests, c: np.ndarray, idx: np.ndarray, w: float, h: float) -> int | None:
    """The free candidate of least (cost, index) among idx, or None. Candidates are tested in
    batches by their base cost, a lower bound of their cost, until no untested one can win:
    on most maps a label finds its place among the first batch of a few hundred candidates."""
    order = idx[np.argsort(c[idx, 5], kind="stable")]
    best: tuple[float, int] | None = None
    for start in range(0, len(order), CANDIDATE_BATCH):
        batch = order[start : start + CANDIDATE_BATCH]
        if best is not None and c[batch[0], 5] > best[0]:
            break
        hit_own, hit_others, hit_labels = tests.hits(batch)
        free = batch[~(hit_own | hit_others | hit_labels)]
        if not len(free):
            continue
        cost = tests.cost(free)
        for j in np.lexsort((free, cost)):
            key = (float(cost[j]), int(free[j]))
            if best is not None and key >= best:
                break
            if not c[key[1], 6] or not tests.leader_crosses(key[1], w, h):
                best = key
                break
    return None if best is None else best[1]


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
    best: Box = (0.0, 0.0, w, h)  # replaced by the first slot: `slots` is never empty
    best_key = None
    # each blocked box grown by 6 px (what a mitred buffer of a box is)
    grown = np.asarray(blocked, dtype=float).reshape(-1, 4) + (-6.0, -6.0, 6.0, 6.0)
    blk = shapely.union_all(shapely.box(*grown.T)) if blocked else None
    # an overlap is measured only where a prepared test finds one: the rest is exactly 0
    obst = _prepared(obstacles) if obstacles is not None and not obstacles.is_empty else None
    blk = _prepared(blk) if blk is not None else None
    for order, (x0, y0) in enumerate(slots):
        x0 = min(max(x0, bounds[0]), bounds[2] - w)
        y0 = min(max(y0, bounds[1]), bounds[3] - h)
        b = box(x0, y0, x0 + w, y0 + h)
        overlap = 0.0
        if obst is not None and obst.intersects(b):
            overlap += b.intersection(obst).area
        if blk is not None and blk.intersects(b):
            overlap += 10.0 * b.intersection(blk).area
        rank = order if near is None else math.hypot(x0 + w / 2 - near[0], y0 + h / 2 - near[1])
        key = (overlap, rank, order)
        if best_key is None or key < best_key:
            best, best_key = (x0, y0, x0 + w, y0 + h), key
    return best


def boxes_overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
