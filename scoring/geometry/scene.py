"""Scenes: the GeoJSON a model reads. Task features get anonymous ids F0, F1, ...; only
task-required properties are kept; coordinates are in the task CRS on a 1 cm grid, so the
serialised scene is exactly what the oracle computed on."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import shapely
import shapely.errors
from shapely.geometry import mapping, shape
from shapely.geometry.base import BaseGeometry

from scoring.errors import InputError
from scoring.geometry.georef import CityCRS, snap_to_grid
from scoring.support.memo import IdentityMemo


class SceneError(InputError, ValueError):
    """A scene that is no valid GeoJSON FeatureCollection of readable geometries. A ValueError
    too: the built-in agents answer a malformed scene in a prompt as they answer any bad prompt."""


@dataclass
class SceneFeature:
    id: str
    kind: str  # road | building | area | poi
    geom: BaseGeometry
    props: dict = field(default_factory=dict)  # task-required attributes only


@dataclass
class Scene:
    crs: CityCRS
    features: list[SceneFeature]

    def __post_init__(self) -> None:
        self._by_id = {f.id: f for f in self.features}

    def __getitem__(self, fid: str) -> SceneFeature:
        return self._by_id[fid]

    def __contains__(self, fid: str) -> bool:
        return fid in self._by_id

    def geom(self, fid: str) -> BaseGeometry:
        return self._by_id[fid].geom

    def ids(self) -> list[str]:
        return [f.id for f in self.features]

    def replace(self, fid: str, geom: BaseGeometry | None = None, props: dict | None = None) -> Scene:
        feats = [
            SceneFeature(
                f.id,
                f.kind,
                geom if (f.id == fid and geom is not None) else f.geom,
                dict(props) if (f.id == fid and props is not None) else dict(f.props),
            )
            for f in self.features
        ]
        return Scene(self.crs, feats)

    def to_geojson(self) -> dict:
        return {
            "type": "FeatureCollection",
            "crs": {"type": "name", "properties": {"name": self.crs.urn}},
            "features": [
                {
                    "type": "Feature",
                    "id": f.id,
                    "properties": {"id": f.id, "kind": f.kind, **f.props},
                    "geometry": geometry_json(f.geom),
                }
                for f in self.features
            ],
        }

    @classmethod
    def from_geojson(cls, fc: Mapping[str, Any], crs: CityCRS | None = None) -> Scene:
        if not isinstance(fc, dict) or not isinstance(fc.get("features"), list):
            raise SceneError("scene: not a GeoJSON FeatureCollection (needs a features list)")
        if crs is None:
            crs = _scene_crs(fc)
        feats = []
        for f in fc["features"]:
            if not isinstance(f, dict):
                raise SceneError("scene: a feature that is not a JSON object")
            props = dict(f.get("properties") or {})
            fid = f.get("id") or props.get("id") or ""
            kind = props.pop("kind", "")
            props.pop("id", None)
            feats.append(SceneFeature(fid, kind, scene_geometry(f.get("geometry"), fid), props))
        return cls(crs, feats)


def _scene_crs(fc: Mapping[str, Any]) -> CityCRS:
    crs = fc.get("crs")
    urn = crs.get("properties", {}).get("name", "") if isinstance(crs, dict) else ""
    try:
        epsg = int(str(urn).rsplit(":", 1)[-1]) if urn else 0
    except ValueError:
        raise SceneError(f"scene: crs {short_text(str(urn))!r} is no EPSG URN") from None
    return CityCRS(epsg=epsg, name=f"EPSG:{epsg}")


# A benchmark's scenes are in a metric task CRS (UTM: eastings below 1e6 m, northings below
# 1e7 m); a coordinate far beyond is a damaged file, and turns measures into inf / NaN downstream.
MAX_COORD_M = 1e8


def scene_geometry(obj: object, fid: object) -> BaseGeometry:
    """A scene feature's GeoJSON geometry as shapely's, or an InputError naming the feature: an
    unclosed or 2-point ring, a 1-point line (GEOS refuses them), a coordinate that is no finite
    number. (Edited scenes come through here too: validity and range are the input's checks.)"""
    try:
        geom = shape(obj)
        xy = shapely.get_coordinates(geom)
    except (shapely.errors.GEOSException, ValueError, TypeError, KeyError, AttributeError, IndexError) as exc:
        reason = str(exc).split(": ", 1)[-1].strip() or type(exc).__name__
        raise SceneError(f"feature {short_text(str(fid))}: invalid geometry ({short_text(reason)})") from None
    if not np.isfinite(xy).all():
        raise SceneError(f"feature {short_text(str(fid))}: a coordinate that is no finite number")
    return geom


def check_input_scene(scene: Scene) -> None:
    """What a scene read from a file must be beyond readable: valid geometry (OGC rules: a
    3-point ring has no area) within the task CRS's range."""
    for f in scene.features:
        xy = shapely.get_coordinates(f.geom)
        if xy.size and np.abs(xy).max() > MAX_COORD_M:
            raise SceneError(
                f"feature {short_text(f.id)}: coordinate out of range (beyond {MAX_COORD_M:.0e} m)"
            )
        if not f.geom.is_valid:
            raise SceneError(
                f"feature {short_text(f.id)}: invalid geometry ({shapely.is_valid_reason(f.geom)})"
            )


def short_text(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else f"{text[: limit // 2]}...{text[-(limit // 2) :]}"


def snap(geom: BaseGeometry) -> BaseGeometry:
    return snap_to_grid(geom)


def _geometry_json(geom: BaseGeometry) -> dict:
    fast = _plain_geometry_json(geom)
    return fast if fast is not None else _rounded(mapping(geom))


def _pairs(xy: np.ndarray) -> list[list[float]]:
    return [[round(x, 2), round(y, 2)] for x, y in xy.tolist()]


def _rings(polygon: BaseGeometry) -> list[list[list[float]]]:
    rings = shapely.get_rings(polygon)  # exterior first, as GeoJSON orders them
    return [_pairs(shapely.get_coordinates(r)) for r in rings]


def _plain_geometry_json(geom: BaseGeometry) -> dict | None:
    """What ``_rounded(mapping(geom))`` gives, for a non-empty 2D point, line, polygon or
    multi-part of one of them, read straight from the coordinate arrays (the same doubles);
    None for anything else (mapping then). Saves building shapely's nested tuples part by part.

    >>> from shapely.geometry import Polygon
    >>> _plain_geometry_json(Polygon([(0, 0), (1.005, 0), (0, 1)]))
    {'type': 'Polygon', 'coordinates': [[[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]]}
    """
    if geom.is_empty or shapely.has_z(geom):
        return None
    kind = geom.geom_type
    if kind == "Point":
        coords: list = _pairs(shapely.get_coordinates(geom))[0]
    elif kind == "LineString":
        coords = _pairs(shapely.get_coordinates(geom))
    elif kind == "Polygon":
        coords = _rings(geom)
    elif kind == "MultiPoint":
        coords = _pairs(shapely.get_coordinates(geom))
        if len(coords) != shapely.get_num_geometries(geom):  # an empty part: mapping says how
            return None
    elif kind == "MultiLineString":
        coords = [_pairs(shapely.get_coordinates(p)) for p in shapely.get_parts(geom)]
    elif kind == "MultiPolygon":
        coords = [_rings(p) for p in shapely.get_parts(geom)]
    else:
        return None
    return {"type": kind, "coordinates": coords}


# GeoJSON geometry of a geometry, coordinates rounded to the 1 cm grid; read-only. Built once per
# geometry (a scored edit re-serialises a whole scene of which only the target changed).
geometry_json = IdentityMemo(_geometry_json, maxsize=8192)


def _rounded(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _rounded(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_rounded(v) for v in obj]
    if isinstance(obj, float):
        return round(obj, 2)
    return obj


# A benchmark instance's scene, read once per scene object: the runner's edit check and the scorer
# read the same scene for every run that edits it (scenes are never modified: an edit makes a new one).
shared_scene: IdentityMemo[Mapping[str, Any], Scene] = IdentityMemo(Scene.from_geojson, maxsize=4096)
