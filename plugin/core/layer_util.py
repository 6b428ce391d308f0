"""Memory layers and layer-tree groups: the plumbing under the plugin's styled layers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from qgis.core import (
    QgsCoordinateReferenceSystem,
    QgsField,
    QgsGeometry,
    QgsLayerTreeGroup,
    QgsLayerTreeLayer,
    QgsMapLayer,
    QgsProject,
    QgsVectorLayer,
)
from shapely import wkt
from shapely.geometry.base import BaseGeometry

from scoring.formats.records import Instance

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


def memory_layer(kind: str, epsg: int, name: str, fields: list[tuple[str, Any]]) -> QgsVectorLayer:
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


def scene_feature(scene: Mapping[str, Any], feature_id: str) -> dict:
    """The scene GeoJSON feature with this id (held in `id` or in properties.id)."""
    for feature in scene["features"]:
        if (feature.get("id") or (feature.get("properties") or {}).get("id")) == feature_id:
            return feature
    raise KeyError(feature_id)


# What the plugin created carries its own id under this key: a layer the user added to one of
# the plugin's groups (a Processing output, a layer dragged in) has no such mark, and a layer
# the user duplicated from one of ours carries another layer's id; neither is ever removed.
CREATED_KEY = "spatialgap/created"
# QGIS's own key: no "temporary scratch layers will be lost" prompt on exit for these drawings,
# which the plugin redraws from the benchmark files at any time.
SKIP_MEMORY_CHECK = "skipMemoryLayersCheck"


def mark_created(layer: QgsMapLayer, *, scratch: bool = True) -> None:
    """Track a layer as the plugin's (by its id); ``scratch``: nothing of the user's in it."""
    layer.setCustomProperty(CREATED_KEY, layer.id())
    if scratch:
        layer.setCustomProperty(SKIP_MEMORY_CHECK, 1)


def is_created(layer: QgsMapLayer | None) -> bool:
    """The plugin's own drawing: its mark, and still in memory. A layer the analyst made
    permanent (QGIS's "Make Permanent" keeps the layer's id) is the analyst's from then on."""
    return (
        layer is not None
        and layer.customProperty(CREATED_KEY) == layer.id()
        and layer.providerType() == "memory"
    )


def _mark_group(group: QgsLayerTreeGroup) -> QgsLayerTreeGroup:
    group.setCustomProperty(CREATED_KEY, "group")
    return group


def is_created_group(node) -> bool:
    return isinstance(node, QgsLayerTreeGroup) and node.customProperty(CREATED_KEY) == "group"


def replace_group(name: str, parent: QgsLayerTreeGroup | None = None) -> QgsLayerTreeGroup:
    """A new empty group `name` on top of `parent` (default: the project root), replacing one of
    that name that the plugin created (and only its own layers)."""
    root = parent or QgsProject.instance().layerTreeRoot()
    old = root.findGroup(name)
    if old is not None and is_created_group(old):
        remove_group(old)
    return _mark_group(root.insertGroup(0, name))


def add_group(parent: QgsLayerTreeGroup, name: str) -> QgsLayerTreeGroup:
    """A sub-group the plugin creates (and may remove again)."""
    return _mark_group(parent.addGroup(name))


def remove_group(group: QgsLayerTreeGroup) -> list[str]:
    """Remove the layers the plugin created in ``group`` and the group itself. Anything else in
    it (the user's layers and groups) moves up to the group's parent, in place of the group, so
    it stays in the project and on the map. Returns the ids of the layers kept."""
    parent = group.parent() or QgsProject.instance().layerTreeRoot()
    created = [n.layerId() for n in group.findLayers() if is_created(n.layer())]
    foreign = _foreign_nodes(group)
    at = parent.children().index(group) if group in parent.children() else 0
    for k, node in enumerate(foreign):
        parent.insertChildNode(at + k, node.clone())
    kept = [lid for node in foreign for lid in _layer_ids(node)]
    if created:
        QgsProject.instance().removeMapLayers(created)
    parent.removeChildNode(group)
    return kept


def _foreign_nodes(group: QgsLayerTreeGroup) -> list:
    """The nodes in ``group`` the plugin did not create (a user's group: whole)."""
    out = []
    for node in group.children():
        if isinstance(node, QgsLayerTreeLayer):
            if not is_created(node.layer()):
                out.append(node)
        elif is_created_group(node):
            out += _foreign_nodes(node)
        else:
            out.append(node)
    return out


def _layer_ids(node) -> list[str]:
    if isinstance(node, QgsLayerTreeLayer):
        return [node.layerId()]
    return [n.layerId() for n in node.findLayers()]


def add_to_group(
    layer: QgsVectorLayer, group: QgsLayerTreeGroup, *, scratch: bool = True, top: bool = False
) -> QgsVectorLayer:
    """Add a layer the plugin created (tracked: see mark_created) at the bottom of ``group``, or
    on ``top`` of it."""
    QgsProject.instance().addMapLayer(layer, False)
    mark_created(layer, scratch=scratch)
    if top:
        group.insertLayer(0, layer)
    else:
        group.addLayer(layer)
    return layer


def crs_of(instance: Instance) -> QgsCoordinateReferenceSystem:
    return QgsCoordinateReferenceSystem(f"EPSG:{int(instance['crs']['epsg'])}")
