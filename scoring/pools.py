"""Feature pools: the real OSM features of one extract, in its task CRS, that scenes are drawn from."""

from __future__ import annotations

from dataclasses import dataclass, field

import shapely
from shapely.geometry.base import BaseGeometry

from scoring.georef import CityCRS

POOL_KINDS = ("road", "building", "area", "poi")


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
    _trees: dict = field(default_factory=dict, repr=False)

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
