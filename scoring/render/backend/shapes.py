"""Shapely geometries in pixel space -> matplotlib paths, segments and marker positions.

Vectorised over whole layers (a map's context holds thousands of buildings): coordinates are
read once per layer with shapely's array functions and split per geometry, in input order.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import matplotlib as mpl
import numpy as np
import shapely
from matplotlib.path import Path as MplPath
from shapely.geometry.polygon import orient

_POLYGONAL = (shapely.GeometryType.POLYGON, shapely.GeometryType.MULTIPOLYGON)
_LINEAR = (shapely.GeometryType.LINESTRING, shapely.GeometryType.LINEARRING)
_PUNTAL = (shapely.GeometryType.POINT, shapely.GeometryType.MULTIPOINT)


def _array(geoms: Iterable[Any]) -> np.ndarray:
    arr = np.empty(len(geoms := list(geoms)), dtype=object)
    arr[:] = geoms
    return arr


def _ring_paths(rings: np.ndarray, owner: np.ndarray, n_owners: int) -> list[MplPath | None]:
    """One compound path per owner of the rings (closed, MOVETO ... CLOSEPOLY); rings of fewer
    than 4 positions are left out, owners without a ring get None. `owner` never decreases."""
    coords, ring_of = shapely.get_coordinates(rings, return_index=True)
    keep = (np.bincount(ring_of, minlength=len(rings)) >= 4)[ring_of]
    coords, ring_of = coords[keep], ring_of[keep]
    if not len(coords):
        return [None] * n_owners
    codes = np.full(len(coords), MplPath.LINETO, dtype=np.uint8)
    starts = np.flatnonzero(np.r_[True, ring_of[1:] != ring_of[:-1]])
    codes[starts] = MplPath.MOVETO
    codes[np.r_[starts[1:], len(coords)] - 1] = MplPath.CLOSEPOLY
    bounds = np.searchsorted(owner[ring_of], np.arange(n_owners + 1))
    make = path_maker()
    return [
        make(coords[a:b], codes[a:b]) if b > a else None for a, b in zip(bounds[:-1], bounds[1:], strict=True)
    ]


def path_maker():
    """A constructor of matplotlib Paths from float (N, 2) vertices and valid codes (or None)
    giving what Path(vertices, codes) gives, attribute for attribute, without its argument
    checks: a map builds hundreds of paths. rcParams are read once, as Path reads them."""
    threshold = mpl.rcParams["path.simplify_threshold"]
    simplify = threshold > 0 and mpl.rcParams["path.simplify"]
    new = MplPath.__new__
    lineto = MplPath.LINETO

    def make(vertices: np.ndarray, codes: np.ndarray | None = None) -> MplPath:
        p = new(MplPath)
        vars(p).update(
            _vertices=vertices,
            _codes=codes,
            _interpolation_steps=1,
            _simplify_threshold=threshold,
            _should_simplify=simplify and len(vertices) >= 128 and (codes is None or np.all(codes <= lineto)),
            _readonly=False,
        )
        return p

    return make


def line_paths(segments: list[np.ndarray]) -> list[MplPath]:
    """The paths LineCollection(segments) would build, to share between collections."""
    make = path_maker()
    return [make(np.asarray(seg, float)) for seg in segments]


def _polygon_paths(geoms: list[Any], merge: bool = False) -> list[MplPath | None]:
    """Per geometry (or, with `merge`, for all of them together), the compound path of its
    polygons; None where there is none."""
    arr = _array(geoms)
    parts, part_owner = shapely.get_parts(arr, return_index=True)
    is_poly = (shapely.get_type_id(parts) == shapely.GeometryType.POLYGON) & ~shapely.is_empty(parts)
    parts, part_owner = parts[is_poly], part_owner[is_poly]
    holed = np.flatnonzero(shapely.get_num_interior_rings(parts) > 0)
    if len(holed):  # holes need the opposite winding of their shell (nonzero fill rule)
        parts[holed] = [orient(p, 1.0) for p in parts[holed]]
    rings, ring_part = shapely.get_rings(parts, return_index=True)
    if merge:
        return _ring_paths(rings, np.zeros(len(rings), dtype=np.intp), 1)
    return _ring_paths(rings, part_owner[ring_part], len(arr))


def poly_paths_each(geoms) -> list[MplPath | None]:
    """The path of each geometry's polygons (None where it has none), in one pass over all of
    them: each is the path poly_paths would make of that geometry alone."""
    return _polygon_paths(list(geoms))


def poly_path(geoms) -> MplPath | None:
    """One compound path of every polygon in `geoms` (None if there is none)."""
    return _polygon_paths(list(geoms), merge=True)[0]


def poly_paths(geoms) -> list[MplPath]:
    """One path per geometry (those without a polygon left out)."""
    return [p for p in _polygon_paths(list(geoms)) if p is not None]


def line_segments(geoms) -> list[np.ndarray]:
    """Vertex arrays of every line (polygons: their boundary)."""
    return [segment for each in line_segments_each(geoms) for segment in each]


def line_segments_each(geoms) -> list[list[np.ndarray]]:
    """line_segments of each geometry, in one pass over all of them (same vertex arrays)."""
    arr = _array(geoms)
    if not len(arr):
        return []
    polygonal = np.isin(shapely.get_type_id(arr), _POLYGONAL)
    if polygonal.any():
        arr = arr.copy()
        arr[polygonal] = shapely.boundary(arr[polygonal])
    parts, owner = shapely.get_parts(arr, return_index=True)
    keep = np.isin(shapely.get_type_id(parts), _LINEAR) & ~shapely.is_empty(parts)
    parts, owner = parts[keep], owner[keep]
    coords, part_of = shapely.get_coordinates(parts, return_index=True)
    # a line that is not empty has two positions or more: one segment per part, in order
    segments = np.split(coords, np.flatnonzero(np.diff(part_of)) + 1) if len(coords) else []
    bounds = np.searchsorted(owner, np.arange(len(arr) + 1)).tolist()
    return [segments[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def points_xy(geoms) -> np.ndarray:
    """Marker positions: the points themselves, else a representative point."""
    arr = _array(geoms)
    if not len(arr):
        return np.empty((0, 2), dtype=float)
    other = ~np.isin(shapely.get_type_id(arr), _PUNTAL)
    if other.any():
        arr = arr.copy()
        arr[other] = shapely.point_on_surface(arr[other])
    return shapely.get_coordinates(shapely.get_parts(arr)).astype(float).reshape(-1, 2)
