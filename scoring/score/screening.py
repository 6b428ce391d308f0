"""Screening of an edited geometry before its constraints are checked: empty, outside the
coordinate domain, at null island, far outside the scene's region, or with far more vertices
than the original (scoring.score.verdicts)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
import shapely
from shapely.geometry.base import BaseGeometry

from scoring.formats.records import Instance

if TYPE_CHECKING:
    from pyproj import Transformer

# A geometry farther than this from the scene's envelope is "far outside the scene's region":
# the larger of 1 km and 5 scene diagonals (a real edit moves a feature by tens of metres).
FAR_MIN_M = 1000.0
FAR_DIAGONALS = 5.0
MIN_VERTEX_BUDGET = 500  # positions an edited F0 may have, at least ...
VERTEX_BUDGET_FACTOR = 8  # ... or this many times the positions of the original F0
NULL_ISLAND_M = 1000.0  # task-CRS distance from (0, 0) ...
NULL_ISLAND_DEG = 0.01  # ... or lon/lat distance from (0°, 0°)


@lru_cache(maxsize=64)
def _to_lonlat(epsg: int) -> Transformer:
    from pyproj import Transformer

    return Transformer.from_crs(f"EPSG:{epsg}", "EPSG:4326", always_xy=True)


def _epsg(instance: Instance) -> int | None:
    crs = instance.get("crs")
    if isinstance(crs, dict) and isinstance(crs.get("epsg"), int):
        return crs["epsg"]
    scene: Mapping[str, Any] = instance.get("scene") or {}
    urn = (scene.get("crs") or {}).get("properties", {}).get("name", "")
    try:
        return int(str(urn).rsplit(":", 1)[-1])
    except ValueError:
        return None


def vertex_budget(edited: BaseGeometry, initial: BaseGeometry) -> str | None:
    """ "too_many_vertices" when an edit returns far more positions than F0 has: no constraint
    needs them, and measuring them would make one reply cost seconds (seen in fuzzing)."""
    budget = max(MIN_VERTEX_BUDGET, VERTEX_BUDGET_FACTOR * shapely.get_num_coordinates(initial))
    return "too_many_vertices" if shapely.get_num_coordinates(edited) > budget else None


def screen_geometry(geom: BaseGeometry, instance: Instance, scene_envelope: tuple | None) -> str | None:
    """Name of the first screening failure of an edited geometry (task CRS), or None.
    empty -> outside_domain -> null_island -> far_outside_scene -> invalid."""
    if geom is None or geom.is_empty:
        return "empty"
    xmin, ymin, xmax, ymax = geom.bounds
    if not all(math.isfinite(v) and abs(v) < 1e8 for v in (xmin, ymin, xmax, ymax)):
        return "outside_domain"
    epsg = _epsg(instance)
    c = geom.centroid if geom.geom_type != "Point" else geom
    if epsg:
        with np.errstate(all="ignore"):  # pyproj returns inf for out-of-domain points
            lon, lat = _to_lonlat(epsg).transform(
                [xmin, xmin, xmax, xmax, c.x], [ymin, ymax, ymin, ymax, c.y]
            )
        if (
            not all(math.isfinite(v) for v in list(lon) + list(lat))
            or any(abs(v) > 180 for v in lon)
            or any(abs(v) > 90 for v in lat)
        ):
            return "outside_domain"
        if math.hypot(lon[-1], lat[-1]) <= NULL_ISLAND_DEG:
            return "null_island"
    if math.hypot(c.x, c.y) <= NULL_ISLAND_M:
        return "null_island"
    if scene_envelope is not None:
        sx0, sy0, sx1, sy1 = scene_envelope
        diag = math.hypot(sx1 - sx0, sy1 - sy0)
        gap = math.hypot(max(sx0 - xmax, 0.0, xmin - sx1), max(sy0 - ymax, 0.0, ymin - sy1))
        if gap > max(FAR_MIN_M, FAR_DIAGONALS * diag):
            return "far_outside_scene"
        # a geometry spanning far beyond the scene on every side reaches far outside it too
        if math.hypot(xmax - xmin, ymax - ymin) > max(FAR_MIN_M, FAR_DIAGONALS * diag) + diag:
            return "far_outside_scene"
    if not geom.is_valid:
        return "invalid"
    return None
