"""The collision tests of label candidate boxes (see labels.py), against a map's obstacles.

Each test keeps the decision of its plain definition: a box hits "the other features" when it
touches the union of their obstacles, is "next to" them when it touches that union buffered by
16 px (quad_segs=2), hits "a placed box" when it touches the union of the placed boxes grown by
3 px. Unions are sets of points, so the first and the last are answered part by part (each
obstacle prepared once per map, each placed box an interval test); only the buffered union,
whose rounded corners are not those of its parts' buffers, is built, and only for an item
whose decision depends on it: a box nearer to the other features than 13 px surely touches
it, one farther than 17 px surely does not (the margins cover its chords and the buffer's
input simplification).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import shapely
from shapely import lib

LARGE_POLYGON_PX2 = 12000.0  # polygons larger than this may carry labels over their interior
MAX_POLYGON_COVER = 0.08  # ... as long as the label covers at most this share of the polygon
NEAR_PX = 16.0  # the buffer that makes a box "next to" another feature
SURELY_NEAR_PX = 13.0  # within this distance a box touches that buffer (chords of <= 67.5 deg)
SURELY_FAR_PX = 17.0  # beyond it, it does not (the buffer reaches NEAR_PX + 1 % at most)
PLACED_GROWTH = 3.0  # placed boxes grown by this (what a mitred buffer of a box is)


def is_large_polygon(geom) -> bool:
    return geom.geom_type in ("Polygon", "MultiPolygon") and geom.area >= LARGE_POLYGON_PX2


def _reach(q: np.ndarray, env: np.ndarray) -> np.ndarray:
    """(boxes x envelopes) whether box q[i] and envelope env[k] share a point (touching
    counts; NaN envelopes of empty geometries reach nothing). Rows are (x0, y0, -x1, -y1) and
    (x1, y1, -x0, -y0): one comparison of each pair (negation is exact)."""
    return (q[:, None, :] <= env[None, :, :]).all(axis=2)


def _flipped(b: np.ndarray, margin: float = 0.0) -> np.ndarray:
    """Envelopes (x0, y0, x1, y1) grown by margin, as _reach compares them."""
    return np.column_stack([b[:, 2] + margin, b[:, 3] + margin, -(b[:, 0] - margin), -(b[:, 1] - margin)])


class MapObstacles:
    """A map's label obstacles (feature id -> pixel geometry), prepared once for all its items,
    and the large polygons whose interior other labels avoid if they can."""

    def __init__(self, obstacles: dict[str, Any], soft_polygons: dict[str, Any]):
        self.obstacles = obstacles
        self.items = [(k, g) for k, g in obstacles.items() if g is not None]
        geoms = np.array([g for _, g in self.items], dtype=object)
        shapely.prepare(geoms)  # in place: a no-op for geometries prepared before
        bounds = shapely.bounds(geoms).reshape(-1, 4)  # NaN (never overlapping) when empty
        # envelopes as they are and grown for the nearness tests (by 1 px more than the
        # distance tested: the filter must never miss a box)
        self.env = {m: _flipped(bounds, m + (m > 0)) for m in (0.0, SURELY_NEAR_PX, SURELY_FAR_PX)}
        self.soft = list(soft_polygons.items())
        soft = np.array([g for _, g in self.soft], dtype=object)
        shapely.prepare(soft)
        self.soft_env = _flipped(shapely.bounds(soft).reshape(-1, 4))

    def others(self, fid: str) -> list[int]:
        return [k for k, (key, _) in enumerate(self.items) if key != fid]


class CandidateTests:
    """The collision tests of one item's candidate boxes, computed for a subset of them only:
    most candidates of a map never need testing once a cheaper one is known to be free."""

    def __init__(self, item, c, corners, index: MapObstacles, placed_boxes, leaders):
        self.item, self.c, self.corners, self.index = item, c, corners, index
        # the candidate boxes, each made when first tested: most are never tested
        self._boxes = np.empty(len(c), dtype=object)
        self._made = np.zeros(len(c), dtype=bool)
        x0, y0, x1, y1 = corners
        self._rows = np.column_stack([x0, y0, -x1, -y1])  # as _reach compares them
        self.others = index.others(item.fid)
        self.own = index.obstacles.get(item.fid)
        grown = np.asarray(placed_boxes, dtype=float).reshape(-1, 4) + (
            -PLACED_GROWTH,
            -PLACED_GROWTH,
            PLACED_GROWTH,
            PLACED_GROWTH,
        )
        self.placed = grown
        self._placed_env = _flipped(grown)
        self._env = {m: env[self.others] for m, env in index.env.items()}
        self.leaders = leaders
        self.soft = [k for k, (key, _) in enumerate(index.soft) if key != item.fid]
        self._soft_env = index.soft_env[self.soft]
        self.large = is_large_polygon(item.geom)
        self._near_union = None  # the others' union buffered by NEAR_PX, when needed

    def boxes(self, idx: np.ndarray) -> np.ndarray:
        """The boxes of candidates idx (shapely Polygons)."""
        new = idx[~self._made[idx]]
        if len(new):
            x0, y0, x1, y1 = self.corners
            self._boxes[new] = lib.box(x0[new], y0[new], x1[new], y1[new], True)
            self._made[new] = True
        return self._boxes[idx]

    def _q(self, idx: np.ndarray) -> np.ndarray:
        """The rows of candidates idx, as _reach compares them."""
        return self._rows[idx]

    def _any_hit(self, idx: np.ndarray, parts: list[int], margin: float, test, among=None) -> np.ndarray:
        """Whether each box idx (or only those of `among`) passes `test(geometry, boxes)` for
        any of the parts: each part tested only against the boxes that reach its envelope
        grown by margin."""
        out = np.zeros(len(idx), dtype=bool)
        if not parts:
            return out
        reach = _reach(self._q(idx), self._env[margin])
        if among is not None:
            reach &= among[:, None]
        for col, k in enumerate(parts):
            todo = reach[:, col] & ~out
            if todo.any():
                out[todo] = test(self.index.items[k][1], self.boxes(idx[todo]))
        return out

    def hits(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(own feature, other features, placed labels and furniture) hit by boxes idx."""
        if self.own is not None:
            hit_own = lib.intersects(self.own, self.boxes(idx))  # prepared: first
        else:
            hit_own = np.zeros(len(idx), dtype=bool)
        if self.large:
            # covering too much of its own polygon counts as hitting it
            free = idx[~hit_own]
            hit_own[~hit_own] = self._cover(free) > MAX_POLYGON_COVER
        hit_others = self._any_hit(idx, self.others, 0.0, lib.intersects)
        hit_placed = _reach(self._q(idx), self._placed_env).any(axis=1)
        return hit_own, hit_others, hit_placed

    def free(self, idx: np.ndarray) -> np.ndarray:
        """Whether boxes idx hit nothing (what hits() tells, the cheapest tests first and the
        others only for the boxes still free)."""
        ok = ~_reach(self._q(idx), self._placed_env).any(axis=1)
        if self.own is not None and ok.any():
            ok[ok] = ~lib.intersects(self.own, self.boxes(idx[ok]))
        if self.large and ok.any():
            ok[ok] = self._cover(idx[ok]) <= MAX_POLYGON_COVER
        if ok.any():
            ok[ok] = ~self._any_hit(idx[ok], self.others, 0.0, lib.intersects)
        return ok

    def _cover(self, idx: np.ndarray) -> np.ndarray:
        """The share of the item's polygon each box idx covers: the box's own area when it lies
        in the polygon's interior, nothing when disjoint, the overlay's area otherwise."""
        geom = self.item.geom
        shapely.prepare(geom)
        boxes = self.boxes(idx)
        inside = shapely.contains_properly(geom, boxes)
        x0, y0, x1, y1 = (a[idx] for a in self.corners)
        cover = np.where(inside, (x1 - x0) * (y1 - y0), 0.0) / geom.area
        # the overlay's area of an interior box is the box's, up to rounding: only a share
        # within that rounding of the threshold is measured as before
        exact = ~inside & shapely.intersects(geom, boxes)
        exact |= inside & (np.abs(cover - MAX_POLYGON_COVER) <= 1e-9)
        if exact.any():
            cover[exact] = shapely.area(shapely.intersection(boxes[exact], geom)) / geom.area
        return cover

    def near_bounds(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(surely next to another feature, perhaps next to one) for boxes idx."""
        maybe = self._any_hit(idx, self.others, SURELY_FAR_PX, lambda g, b: lib.dwithin(g, b, SURELY_FAR_PX))
        sure = self._any_hit(
            idx, self.others, SURELY_NEAR_PX, lambda g, b: lib.dwithin(g, b, SURELY_NEAR_PX), among=maybe
        )
        return sure, maybe & ~sure

    def near_exact(self, idx: np.ndarray) -> np.ndarray:
        """Whether boxes idx touch the others' union buffered by NEAR_PX, by that very geometry."""
        if self._near_union is None:
            others = [g for k, g in self.index.obstacles.items() if k != self.item.fid]
            self._near_union = shapely.union_all(others).buffer(NEAR_PX, quad_segs=2)
            shapely.prepare(self._near_union)
        return shapely.intersects(self.boxes(idx), self._near_union)

    def soft_hits(self, idx: np.ndarray) -> list[np.ndarray]:
        """Per other large polygon, whether boxes idx touch it."""
        out = []
        if self.soft:
            reach = _reach(self._q(idx), self._soft_env)
            for col, k in enumerate(self.soft):
                hit = np.zeros(len(idx), dtype=bool)
                if reach[:, col].any():
                    hit[reach[:, col]] = lib.intersects(self.index.soft[k][1], self.boxes(idx[reach[:, col]]))
                out.append(hit)
        return out

    @staticmethod
    def cost_of(base: np.ndarray, near: np.ndarray, soft: list[np.ndarray]) -> np.ndarray:
        """Costs: base, +15 next to another feature (ambiguous labels), +25 per other large
        polygon whose interior the box touches; the very sums, in the order, of the plain
        definition."""
        cost = base + 15.0 * near
        for hit in soft:
            cost += 25.0 * hit
        return cost

    def cost(self, idx: np.ndarray) -> np.ndarray:
        """The exact cost of candidates idx."""
        near, unsure = self.near_bounds(idx)
        if unsure.any():
            near[unsure] = self.near_exact(idx[unsure])
        return self.cost_of(self.c[idx, 5], near, self.soft_hits(idx))

    def leader_crosses(self, i: int, w: float, h: float) -> bool:
        """Whether the leader of displaced candidate i crosses a label or another feature."""
        ax_, ay_, x0, y0 = self.c[i, 2], self.c[i, 3], self.c[i, 0], self.c[i, 1]
        end = (np.clip(ax_, x0, x0 + w), np.clip(ay_, y0, y0 + h))
        lg = shapely.linestrings(np.array([[[ax_, ay_], end]]))[0]
        parts = [self.index.items[k][1] for k in self.others] + list(self.leaders)
        if len(self.placed):
            parts += list(shapely.box(*self.placed.T))
        return bool(shapely.intersects(lg, np.array(parts, dtype=object)).any()) if parts else False
