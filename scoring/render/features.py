"""The task features of one instance, as the map draws them: geometry in task CRS, EPSG:3857 and
pixels, colour, target flag; and what the instance says about them (attributes shown or withheld)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from shapely.geometry import shape

from scoring.errors import InputError
from scoring.formats.records import Instance

_ID_RE = re.compile(r"^[A-Za-z0-9._-]+$")
_EPSG_RE = re.compile(r"EPSG:{1,2}(?:[0-9.]*:)?(\d+)$")
_FID_RE = re.compile(r"^([A-Za-z]*)(\d+)$")
LEVEL_ATTRIBUTES = ("layer", "bridge", "tunnel")


@dataclass
class TaskFeature:
    fid: str
    kind: str
    props: dict[str, Any]
    geom_task: Any
    geom_3857: Any = None
    geom_px: Any = None
    color: str = "#000000"
    target: bool = False


@dataclass
class MapSubject:
    """What one map shows: the instance's task features and the attributes its question uses."""

    iid: str
    task_epsg: int
    features: list[TaskFeature]
    attributes: list[str]  # shown on attribute cards
    withheld: list[str]
    is_edit: bool
    # questions about vertical order (O06): the drawing must not suggest which road is on top
    levels: bool
    target_id: str

    @classmethod
    def of(cls, instance: Instance, default_epsg: int | None) -> MapSubject:
        iid = sanitize_id(instance.get("id"))
        task_epsg = task_epsg_of(instance, default_epsg)
        features = scene_features(instance)
        info: Mapping[str, Any] = instance.get("information") or {}
        withheld = [str(a) for a in info.get("withheld") or []]
        attributes = [str(a) for a in info.get("attributes") or [] if str(a) not in withheld]
        return cls(
            iid=iid,
            task_epsg=task_epsg,
            features=features,
            attributes=attributes,
            withheld=withheld,
            is_edit=instance.get("task") == "edit",
            levels=any(a in LEVEL_ATTRIBUTES for a in attributes + withheld),
            target_id=str(instance.get("target", "F0")),
        )


def sanitize_id(iid: Any) -> str:
    iid = str(iid)
    if not _ID_RE.match(iid):
        raise InputError(f"instance id {iid!r} is not usable as a file name")
    return iid


def task_epsg_of(instance: Instance, default: int | None = None) -> int:
    scene: Mapping[str, Any] = instance.get("scene") or {}
    name = ((scene.get("crs") or {}).get("properties") or {}).get("name", "")
    m = _EPSG_RE.search(str(name))
    if m:
        return int(m.group(1))
    if default is None:
        raise InputError(f"instance {instance.get('id')}: scene has no EPSG crs")
    return int(default)


def scene_features(instance: Instance) -> list[TaskFeature]:
    feats = []
    # attributes shown on the map but not in the GeoJSON (the paper protocol's O06)
    on_map = instance.get("map_properties") or {}
    scene: Mapping[str, Any] = instance.get("scene") or {}
    for f in scene.get("features", []):
        props = dict(f.get("properties") or {})
        fid = str(props.get("id", f.get("id")))
        props.update(on_map.get(fid) or {})
        geom = shape(f["geometry"])
        if geom.is_empty:
            continue
        feats.append(TaskFeature(fid, str(props.get("kind", "feature")), props, geom))
    if not feats:
        raise InputError(f"instance {instance.get('id')}: scene has no features")
    return feats


def assign_colors(features: list[TaskFeature], palette: list[str], target_color: str) -> None:
    """The target (and F0) get the target colour; the others take palette colours in id order.
    Once every palette colour is used, a colour is reused where its nearest same-coloured
    feature is farthest away, so two features of one colour are never neighbours."""
    used: dict[str, list[TaskFeature]] = {}
    for f in features:
        if f.target or f.fid == "F0":
            f.color = target_color
            continue
        free = [c for c in palette if c not in used]
        if free:
            f.color = free[0]
        else:

            def gap(c, f=f):
                return min(f.geom_px.distance(o.geom_px) for o in used[c])

            f.color = max(palette, key=lambda c: (gap(c), -palette.index(c)))
        used.setdefault(f.color, []).append(f)


def fid_key(fid: str) -> tuple[str, int, str]:
    """Natural order of feature ids: F2 before F10."""
    m = _FID_RE.match(fid)
    return (m.group(1), int(m.group(2)), "") if m else (fid, 0, fid)


def clearance(f: TaskFeature, task_style: dict[str, Any]) -> float:
    """Pixels around a feature's drawn geometry that labels and panels keep clear of."""
    t = task_style
    g = geom_type(f.geom_px)
    if g in ("Point", "MultiPoint"):
        size = t["target_point_size"] if f.target else t["point_size"]
        return size / 2.0 + 4.0
    if g in ("LineString", "MultiLineString"):
        w = t["target_line_width"] if f.target else t["line_width"]
        return w / 2.0 + t["halo_width"] + 2.0
    w = t["target_polygon_edge_width"] if f.target else t["polygon_edge_width"]
    return w / 2.0 + 4.0


def geom_type(g: Any) -> str:
    """g.geom_type: shapely 2 names each geometry class by its type ("Point", "MultiPolygon"...);
    the class name costs nothing, the property a GEOS call (~7 us, asked hundreds of times a map)."""
    return type(g).__name__


def pixel_extent(f: TaskFeature) -> float:
    x0, y0, x1, y1 = f.geom_px.bounds
    return max(x1 - x0, y1 - y0)
