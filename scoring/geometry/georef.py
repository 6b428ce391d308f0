"""Georeferencing: the task CRS of a city, its 1 cm grid, and the pixel <-> EPSG:3857 <-> task CRS
transforms of a rendered map.

Pixel convention (GDAL's geotransform): (col, row) = (0, 0) is the top-left CORNER of the top-left
pixel; rows grow downwards. A map is a north-up EPSG:3857 view, so pixel -> EPSG:3857 is an
axis-aligned affine; EPSG:3857 <-> task CRS goes through EPSG:4326 with pyproj (always_xy).

Only numpy, pyproj and shapely: the scorer and the runner import this without matplotlib.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import shapely
from numpy.typing import ArrayLike
from pyproj import CRS, Geod, Proj, Transformer
from shapely.geometry.base import BaseGeometry

GRID = 0.01  # metres: coordinates are snapped to this grid (and serialised with 2 decimals)


@dataclass(frozen=True)
class CityCRS:
    """The task CRS of a city: a WGS 84 / UTM zone (metres, +y = grid north)."""

    epsg: int
    name: str

    @classmethod
    def for_lonlat(cls, lon: float, lat: float) -> CityCRS:
        zone = min(60, max(1, int(math.floor((lon + 180.0) / 6.0)) + 1))
        epsg = (32600 if lat >= 0 else 32700) + zone
        return cls(epsg=epsg, name=CRS.from_epsg(epsg).name)

    @property
    def urn(self) -> str:
        return f"urn:ogc:def:crs:EPSG::{self.epsg}"

    def as_dict(self) -> dict:
        return {
            "epsg": self.epsg,
            "name": self.name,
            "urn": self.urn,
            "units": "metre",
            "axes": "x = easting, y = northing; +y is grid north",
        }


WEB_MERCATOR = 3857
WGS84 = 4326
_GEOD = Geod(ellps="WGS84")
# One coordinate of one point or of many: the transforms below take and give either.
Coords = float | np.ndarray
XY = tuple[Coords, Coords]


@cache
def _transformer(src: int, dst: int) -> Transformer:
    return Transformer.from_crs(f"EPSG:{src}", f"EPSG:{dst}", always_xy=True)


def task_to_3857(x: ArrayLike, y: ArrayLike, task_epsg: int) -> XY:
    """Task CRS -> EPSG:4326 -> EPSG:3857 (arrays or scalars)."""
    lon, lat = _transformer(task_epsg, WGS84).transform(x, y)
    return _transformer(WGS84, WEB_MERCATOR).transform(lon, lat)


def m3857_to_task(x: ArrayLike, y: ArrayLike, task_epsg: int) -> XY:
    """EPSG:3857 -> EPSG:4326 -> task CRS (arrays or scalars)."""
    lon, lat = _transformer(WEB_MERCATOR, WGS84).transform(x, y)
    return _transformer(WGS84, task_epsg).transform(lon, lat)


def m3857_to_lonlat(x: ArrayLike, y: ArrayLike) -> XY:
    return _transformer(WEB_MERCATOR, WGS84).transform(x, y)


def grid_convergence_at(task_epsg: int, lon: float, lat: float) -> float:
    """Clockwise angle from true north (straight up on a north-up Web Mercator map, which is
    conformal) to the task CRS's grid north (+y) at (lon, lat): PROJ's meridian convergence.
    Question bearings are grid bearings; map bearing = grid bearing + this."""
    return float(_proj(task_epsg).get_factors(lon, lat).meridian_convergence)


def grid_convergence_deg(task_epsg: int, x: float, y: float) -> float:
    """`grid_convergence_at` for a point given in task coordinates."""
    lon, lat = _transformer(task_epsg, WGS84).transform(x, y)
    return grid_convergence_at(task_epsg, lon, lat)


@cache
def _proj(epsg: int) -> Proj:
    return Proj(f"EPSG:{epsg}")


def _apply_xy(geom: BaseGeometry, func: Callable[[np.ndarray, np.ndarray], XY]) -> BaseGeometry:
    """Apply a vectorised (x, y) -> (x, y) function to every vertex of a shapely geometry."""

    def f(coords: np.ndarray) -> np.ndarray:
        if len(coords) == 0:
            return coords
        x, y = func(coords[:, 0], coords[:, 1])
        return np.column_stack([np.asarray(x, dtype=float), np.asarray(y, dtype=float)])

    return shapely.transform(geom, f)


GeoTransform = tuple[float, float, float, float, float, float]


def _six_floats(values: Iterable[float]) -> GeoTransform:
    a, b, c, d, e, f = (float(v) for v in values)
    return (a, b, c, d, e, f)


@dataclass(frozen=True)
class PixelTransform:
    """Maps image pixels (corner convention, see module doc) to EPSG:3857 and the task CRS.

    `geotransform` is GDAL-ordered: (x_origin, pixel_width, 0, y_origin, 0, -pixel_height).
    For an inset, the pixel coordinates are still those of the whole image (the inset's box
    inside it), only the affine differs.
    """

    geotransform: GeoTransform
    task_epsg: int
    width: int
    height: int

    # ---- construction -------------------------------------------------------------------
    @classmethod
    def from_view(
        cls,
        x_min: float,
        y_max: float,
        resolution: float,
        width: int,
        height: int,
        task_epsg: int,
        col0: float = 0.0,
        row0: float = 0.0,
    ) -> PixelTransform:
        """View whose pixel (col0, row0) corner sits at EPSG:3857 (x_min, y_max)."""
        gt = (x_min - col0 * resolution, resolution, 0.0, y_max + row0 * resolution, 0.0, -resolution)
        return cls(_six_floats(gt), int(task_epsg), int(width), int(height))

    @classmethod
    def from_sidecar(cls, sidecar: str | Path | dict[str, Any], inset: str | None = None) -> PixelTransform:
        """Read the transform of a map (or of one of its insets, by inset id) from its sidecar."""
        data = sidecar if isinstance(sidecar, dict) else json.loads(Path(sidecar).read_text(encoding="utf-8"))
        gt = data["transform"]["geotransform"]
        if inset is not None:
            matches = [i for i in data.get("insets", []) if i["id"] == inset]
            if not matches:
                raise KeyError(f"no inset {inset!r} in sidecar of {data.get('id')}")
            gt = matches[0]["geotransform"]
        return cls(
            _six_floats(gt),
            int(data["crs"]["task_epsg"]),
            int(data["image"]["width"]),
            int(data["image"]["height"]),
        )

    # ---- affine part --------------------------------------------------------------------
    @property
    def resolution(self) -> float:
        """EPSG:3857 metres per pixel (not ground metres: see ground_pixel_size)."""
        return self.geotransform[1]

    def pixel_to_3857(self, col: ArrayLike, row: ArrayLike) -> XY:
        g = self.geotransform
        col = np.asarray(col, dtype=float)
        row = np.asarray(row, dtype=float)
        return g[0] + col * g[1] + row * g[2], g[3] + col * g[4] + row * g[5]

    def m3857_to_pixel(self, x: ArrayLike, y: ArrayLike) -> XY:
        g = self.geotransform
        det = g[1] * g[5] - g[2] * g[4]
        dx = np.asarray(x, dtype=float) - g[0]
        dy = np.asarray(y, dtype=float) - g[3]
        return (g[5] * dx - g[2] * dy) / det, (-g[4] * dx + g[1] * dy) / det

    # ---- through pyproj -----------------------------------------------------------------
    def pixel_to_task(self, col: ArrayLike, row: ArrayLike) -> XY:
        x, y = self.pixel_to_3857(col, row)
        return m3857_to_task(x, y, self.task_epsg)

    def task_to_pixel(self, x: ArrayLike, y: ArrayLike) -> XY:
        return self.m3857_to_pixel(*task_to_3857(x, y, self.task_epsg))

    def pixel_to_lonlat(self, col: ArrayLike, row: ArrayLike) -> XY:
        return m3857_to_lonlat(*self.pixel_to_3857(col, row))

    def ground_pixel_size(self, col: float | None = None, row: float | None = None) -> float:
        """Ground metres spanned east-west by one pixel at pixel (col, row) (default: image centre).

        Measured on the WGS 84 ellipsoid (pyproj.Geod) between the pixel's west and east edges.
        This is the Web Mercator scale correction: ~ resolution * cos(latitude); the spherical
        1/cos(lat) formula alone is 0.25 % short at 60 deg N (ellipsoidal term), so the geodesic
        is used. North-south the ground size differs by < 0.2 % (see ground_pixel_size_ns)."""
        if col is None or row is None:
            col, row = self.width / 2.0, self.height / 2.0
        lon0, lat0 = self.pixel_to_lonlat(float(col) - 0.5, float(row))
        lon1, lat1 = self.pixel_to_lonlat(float(col) + 0.5, float(row))
        return float(_GEOD.inv(float(lon0), float(lat0), float(lon1), float(lat1))[2])

    def ground_pixel_size_ns(self, col: float | None = None, row: float | None = None) -> float:
        """Ground metres spanned north-south by one pixel at pixel (col, row)."""
        if col is None or row is None:
            col, row = self.width / 2.0, self.height / 2.0
        lon0, lat0 = self.pixel_to_lonlat(float(col), float(row) - 0.5)
        lon1, lat1 = self.pixel_to_lonlat(float(col), float(row) + 0.5)
        return float(_GEOD.inv(float(lon0), float(lat0), float(lon1), float(lat1))[2])

    def ground_pixel_size_at_task(self, x: float, y: float) -> float:
        """Ground metres spanned by one pixel at a task-CRS point."""
        col, row = self.task_to_pixel(x, y)
        return self.ground_pixel_size(float(col), float(row))

    # ---- geometries ---------------------------------------------------------------------
    def geometry_pixel_to_task(self, geom: BaseGeometry) -> BaseGeometry:
        """Shapely geometry in pixel (col, row) coordinates -> the same geometry in task CRS."""
        return _apply_xy(geom, self.pixel_to_task)

    def geometry_task_to_pixel(self, geom: BaseGeometry) -> BaseGeometry:
        return _apply_xy(geom, self.task_to_pixel)

    def geometry_3857_to_pixel(self, geom: BaseGeometry) -> BaseGeometry:
        return _apply_xy(geom, self.m3857_to_pixel)

    def geometry_pixel_to_3857(self, geom: BaseGeometry) -> BaseGeometry:
        return _apply_xy(geom, self.pixel_to_3857)

    def to_json(self) -> dict[str, Any]:
        g = self.geotransform
        det = g[1] * g[5] - g[2] * g[4]
        inverse = (  # GDAL InvGeoTransform ordering: col = i0 + i1*X + i2*Y, row = i3 + i4*X + i5*Y
            (g[2] * g[3] - g[0] * g[5]) / det,
            g[5] / det,
            -g[2] / det,
            (-g[1] * g[3] + g[0] * g[4]) / det,
            -g[4] / det,
            g[1] / det,
        )
        return {"geotransform": list(g), "inverse_geotransform": list(inverse)}


def snap_to_grid(geom: BaseGeometry) -> BaseGeometry:
    """Coordinates snapped to the 1 cm grid (validity kept by GEOS). The result is re-read from
    WKB so it carries no precision model: otherwise GEOS would also round derived results such
    as centroids to the grid, and the oracle would disagree with a re-read of the scene."""
    snapped = shapely.set_precision(geom, GRID)
    # GEOS's grid values can differ from round(x, 2) in the last bit; use exactly the doubles
    # the GeoJSON will carry, so a re-read scene is bit-identical to the one the oracle saw.
    coords = shapely.get_coordinates(snapped)
    rounded = [[round(float(x), 2), round(float(y), 2)] for x, y in coords]
    plain = shapely.from_wkb(shapely.to_wkb(snapped))
    return shapely.set_coordinates(plain, rounded) if len(rounded) else plain
