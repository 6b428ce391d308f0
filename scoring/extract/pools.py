"""Feature pools: the real OSM features of one extract, in its task CRS, that scenes are drawn from."""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field, replace

import shapely
from shapely.geometry.base import BaseGeometry

from scoring.geometry.georef import CityCRS
from scoring.vocab import PoolKind

POOL_KINDS: tuple[PoolKind, ...] = tuple(PoolKind)


@dataclass(frozen=True)
class PoolFeature:
    """One real OSM feature in task coordinates."""

    uid: str  # "way/123", "node/45", "relation/6": OSM type and id
    kind: str  # road | building | area | poi
    geom: BaseGeometry  # LineString | Polygon | Point, snapped to GRID
    props: dict


@dataclass
class Thresholds:
    """City-specific legibility filters, derived from the extract's own distributions."""

    road_min_length_m: float
    building_min_area_m2: float
    area_min_area_m2: float
    area_max_area_m2: float

    def as_dict(self) -> dict:
        return {k: round(v, 2) for k, v in self.__dict__.items()}


@dataclass
class FeaturePools:
    city: str
    crs: CityCRS
    source: str
    source_sha256: str
    features: dict[str, list[PoolFeature]]
    thresholds: Thresholds
    stats: dict = field(default_factory=dict)
    # Map context only (kind -> features, e.g. "water": lakes, rivers and the sea derived from
    # the coastline). Never part of `features`: no task, count or threshold sees it.
    context: dict[str, list[PoolFeature]] = field(default_factory=dict)
    # The QA / editing halves (task -> pools) once `split_pools` ran; empty: both use the whole.
    split: dict[str, FeaturePools] = field(default_factory=dict, repr=False)
    _trees: dict = field(default_factory=dict, repr=False)

    def for_task(self, task: str) -> FeaturePools:
        """The pools instances of `task` are drawn from."""
        return self.split.get(task, self)

    def tree(self, kind: str) -> shapely.STRtree:
        if kind not in self._trees:
            self._trees[kind] = shapely.STRtree([f.geom for f in self.features[kind]])
        return self._trees[kind]

    def near(self, kind: str, geom: BaseGeometry, radius: float) -> list[PoolFeature]:
        """Features of `kind` within `radius` metres of `geom`, in a stable order."""
        pool = self.features[kind]
        if not pool:
            return []
        idx = self.tree(kind).query(geom, predicate="dwithin", distance=radius)
        return [pool[i] for i in sorted(idx.tolist())]

    def counts(self) -> dict[str, int]:
        return {k: len(v) for k, v in self.features.items()}

    def extent(self) -> tuple[float, float, float, float]:
        geoms = [f.geom for fs in self.features.values() for f in fs]
        return tuple(shapely.total_bounds(geoms).tolist())


# ---------------------------------------------------------------- QA / editing split

SPLIT_TILE_M = 200.0  # side of the square tiles the split assigns whole (scenes stay together)
SPLIT_TASKS = ("qa", "edit")


def _layered(f: PoolFeature) -> bool:
    """A road on another level than the ground (a rare class the split must not give to one
    task only: the layer-hierarchy relation needs it on both sides)."""
    if f.props.get("layer") not in (None, 0):
        return True
    return any(
        str(f.props.get(k, "no")).lower() not in ("no", "false", "0", "") for k in ("bridge", "tunnel")
    )


def _tile_classes(by_kind: dict[str, list[PoolFeature]]) -> dict[str, int]:
    """How many features of each class a tile holds (the four kinds, plus layered roads)."""
    out = {k: len(fs) for k, fs in by_kind.items()}
    layered = sum(1 for f in by_kind.get("road", []) if _layered(f))
    if layered:
        out["road_layered"] = layered
    return out


def _tile_rank(tile: tuple[int, int]) -> bytes:
    return hashlib.sha256(f"{tile[0]},{tile[1]}".encode()).digest()


def split_pools(pools: FeaturePools, tile_m: float = SPLIT_TILE_M) -> dict:
    """Split the city's pools between QA and editing (the paper: "QA and editing use separate
    instance pools"), in place (`pools.split`); returns the split's record for the manifest.

    A feature goes with the square tile holding its point-on-surface: tiles rather than a hash
    of the OSM id keep a neighbourhood whole, so a scene keeps the real density of its
    surroundings. Tiles are dealt in the order of a hash of their indices (independent of the
    seed: a feature is never QA at one seed and editing at another), each to the task that
    leaves the two tasks' shares of every class (the four kinds and the rare layered roads)
    closest: both tasks get about half of every class even in a small extract."""
    tiles: dict[tuple[int, int], dict[str, list[PoolFeature]]] = {}
    for kind, feats in pools.features.items():
        if not feats:
            continue
        pts = shapely.point_on_surface([f.geom for f in feats])
        for f, x, y in zip(feats, shapely.get_x(pts), shapely.get_y(pts), strict=True):
            key = (math.floor(float(x) / tile_m), math.floor(float(y) / tile_m))
            tiles.setdefault(key, {}).setdefault(kind, []).append(f)
    weight = {key: _tile_classes(by_kind) for key, by_kind in tiles.items()}
    totals: dict[str, int] = {}
    for w in weight.values():
        for c, n in w.items():
            totals[c] = totals.get(c, 0) + n
    # per task and class, the share of the city's features of that class dealt so far
    share = {t: dict.fromkeys(totals, 0.0) for t in SPLIT_TASKS}
    side_of: dict[tuple[int, int], str] = {}
    for key in sorted(tiles, key=_tile_rank):
        add = {c: n / totals[c] for c, n in weight[key].items()}

        def imbalance(task: str, add=add) -> float:
            # sum over classes of the squared gap between the tasks' shares, with this tile dealt
            other = SPLIT_TASKS[1 - SPLIT_TASKS.index(task)]
            return sum((share[task][c] + add.get(c, 0.0) - share[other][c]) ** 2 for c in totals)

        task = min(SPLIT_TASKS, key=lambda t: (imbalance(t), sum(share[t].values()), SPLIT_TASKS.index(t)))
        side_of[key] = task
        for c, v in add.items():
            share[task][c] += v
    parts: dict[str, dict[str, list[PoolFeature]]] = {t: {k: [] for k in pools.features} for t in SPLIT_TASKS}
    for key, by_kind in tiles.items():
        for kind, fs in by_kind.items():
            parts[side_of[key]][kind].extend(fs)
    for t in SPLIT_TASKS:  # the pools' own stable order
        for kind in parts[t]:
            order = {f.uid: i for i, f in enumerate(pools.features[kind])}
            parts[t][kind].sort(key=lambda f: order[f.uid])
    pools.split = {t: replace(pools, features=parts[t], split={}, _trees={}) for t in SPLIT_TASKS}
    return {
        "method": "spatial tiles",
        "tile_m": tile_m,
        "rule": "a feature belongs to the tile holding its point-on-surface (ix, iy = floor(x / "
        "tile_m), floor(y / tile_m) in the task CRS); tiles taken in the order of sha256('ix,iy') "
        "go each to the task that keeps the two tasks' shares of every class (road, building, "
        "area, poi, layered road) closest (least sum of squared differences)",
        "tiles": {t: sum(1 for v in side_of.values() if v == t) for t in SPLIT_TASKS},
        "pools": {t: pools.split[t].counts() for t in SPLIT_TASKS},
    }


def unsplit_record(pools: FeaturePools) -> dict:
    """The manifest record when both tasks draw from the whole city (split switched off)."""
    pools.split = {}
    return {"method": "none", "pools": {t: pools.counts() for t in SPLIT_TASKS}}
