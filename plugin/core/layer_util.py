"""Memory layers and layer-tree groups: the plumbing under the plugin's styled layers."""

from __future__ import annotations

from qgis.core import (
    QgsCoordinateReferenceSystem,
    QgsField,
    QgsGeometry,
    QgsLayerTreeGroup,
    QgsProject,
    QgsVectorLayer,
)
from qgis.PyQt.QtCore import QVariant
from shapely import wkt
from shapely.geometry.base import BaseGeometry

GEOM_TYPES = (
    ("point", "MultiPoint", ("Point", "MultiPoint")),
    ("line", "MultiLineString", ("LineString", "MultiLineString", "LinearRing")),
    ("polygon", "MultiPolygon", ("Polygon", "MultiPolygon")),
)


def geom_class(geom) -> str | None:
    for name, _, types in GEOM_TYPES:
        if geom.geom_type in types:
            return name
    return None


def explode(geom):
    """A geometry collection as its members (others: itself)."""
    if geom.geom_type == "GeometryCollection":
        for g in geom.geoms:
            yield from explode(g)
    else:
        yield geom


def memory_layer(kind: str, epsg: int, name: str, fields: list[tuple[str, QVariant.Type]]) -> QgsVectorLayer:
    wkb = dict((n, w) for n, w, _ in GEOM_TYPES)[kind]
    layer = QgsVectorLayer(f"{wkb}?crs=EPSG:{epsg}", name, "memory")
    layer.dataProvider().addAttributes([QgsField(n, t) for n, t in fields])
    layer.updateFields()
    return layer


def to_qgs(geom) -> QgsGeometry:
    multi = QgsGeometry.fromWkt(geom.wkt)
    multi.convertToMultiType()
    return multi


def to_shapely(geometry: QgsGeometry, like: str) -> BaseGeometry:
    """A QGIS geometry as shapely; one part of a multi-typed layer becomes single again when the
    original geometry (of GeoJSON type `like`) was single."""
    geom = wkt.loads(geometry.asWkt())
    if geom.geom_type.startswith("Multi") and not like.startswith("Multi") and len(geom.geoms) == 1:
        return geom.geoms[0]
    return geom


def scene_feature(scene: dict, feature_id: str) -> dict:
    """The scene GeoJSON feature with this id (held in `id` or in properties.id)."""
    for feature in scene["features"]:
        if (feature.get("id") or (feature.get("properties") or {}).get("id")) == feature_id:
            return feature
    raise KeyError(feature_id)


def replace_group(name: str, parent: QgsLayerTreeGroup | None = None) -> QgsLayerTreeGroup:
    """A new empty group `name` on top of `parent` (default: the project root), replacing one of
    that name and its layers."""
    root = parent or QgsProject.instance().layerTreeRoot()
    old = root.findGroup(name)
    if old is not None:
        remove_group(old)
    return root.insertGroup(0, name)


def remove_group(group: QgsLayerTreeGroup) -> None:
    ids = [node.layerId() for node in group.findLayers()]
    parent = group.parent()
    if ids:
        QgsProject.instance().removeMapLayers(ids)
    if parent is not None:
        parent.removeChildNode(group)


def add_to_group(layer: QgsVectorLayer, group: QgsLayerTreeGroup) -> QgsVectorLayer:
    QgsProject.instance().addMapLayer(layer, False)
    group.addLayer(layer)
    return layer


def crs_of(instance: dict) -> QgsCoordinateReferenceSystem:
    return QgsCoordinateReferenceSystem(f"EPSG:{int(instance['crs']['epsg'])}")
