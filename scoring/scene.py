"""Scenes: the GeoJSON a model reads. Task features get anonymous ids F0, F1, ...; only
task-required properties are kept; coordinates are in the task CRS on a 1 cm grid, so the
serialised scene is exactly what the oracle computed on."""

from __future__ import annotations

from dataclasses import dataclass, field

from shapely.geometry import mapping, shape
from shapely.geometry.base import BaseGeometry

from scoring.georef import CityCRS, snap_to_grid
from scoring.memo import IdentityMemo


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

    def __post_init__(self):
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
    def from_geojson(cls, fc: dict, crs: CityCRS | None = None) -> Scene:
        if crs is None:
            urn = fc.get("crs", {}).get("properties", {}).get("name", "")
            epsg = int(urn.rsplit(":", 1)[-1]) if urn else 0
            crs = CityCRS(epsg=epsg, name=f"EPSG:{epsg}")
        feats = []
        for f in fc["features"]:
            props = dict(f.get("properties") or {})
            fid = f.get("id") or props.get("id") or ""
            kind = props.pop("kind", "")
            props.pop("id", None)
            feats.append(SceneFeature(fid, kind, shape(f["geometry"]), props))
        return cls(crs, feats)


def snap(geom: BaseGeometry) -> BaseGeometry:
    return snap_to_grid(geom)


def _geometry_json(geom: BaseGeometry) -> dict:
    return _rounded(mapping(geom))


# GeoJSON geometry of a geometry, coordinates rounded to the 1 cm grid; read-only. Built once per
# geometry (a scored edit re-serialises a whole scene of which only the target changed).
geometry_json = IdentityMemo(_geometry_json, maxsize=8192)


def _rounded(obj):
    if isinstance(obj, dict):
        return {k: _rounded(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_rounded(v) for v in obj]
    if isinstance(obj, float):
        return round(obj, 2)
    return obj


# A benchmark instance's scene, read once per scene object: the runner's edit check and the scorer
# read the same scene for every run that edits it (scenes are never modified: an edit makes a new one).
shared_scene: IdentityMemo[dict, Scene] = IdentityMemo(Scene.from_geojson, maxsize=4096)
