"""Scenes, edits and constraint explanations as styled memory layers (no geometry logic here:
shapes come from the scene GeoJSON and scoring.explain)."""

from __future__ import annotations

import json
from pathlib import Path

import shapely
from qgis.core import (
    Qgis,
    QgsCategorizedSymbolRenderer,
    QgsCoordinateReferenceSystem,
    QgsFeature,
    QgsField,
    QgsFillSymbol,
    QgsGeometry,
    QgsLayerTreeGroup,
    QgsLineSymbol,
    QgsMarkerSymbol,
    QgsPalLayerSettings,
    QgsProject,
    QgsRendererCategory,
    QgsRuleBasedRenderer,
    QgsSingleSymbolRenderer,
    QgsTextBufferSettings,
    QgsTextFormat,
    QgsVectorLayer,
    QgsVectorLayerSimpleLabeling,
)
from qgis.PyQt.QtCore import QTimer, QVariant
from qgis.PyQt.QtGui import QColor, QFont
from shapely import wkt
from shapely.geometry import shape
from shapely.geometry.base import BaseGeometry

from .i18n import tr

GEOM_TYPES = (
    ("point", "MultiPoint", ("Point", "MultiPoint")),
    ("line", "MultiLineString", ("LineString", "MultiLineString", "LinearRing")),
    ("polygon", "MultiPolygon", ("Polygon", "MultiPolygon")),
)
TARGET_COLOR = "#d7301f"
FEATURE_COLOR = "#2b6cb0"
PASS_COLOR = "#1a9850"
FAIL_COLOR = "#d73027"


def kind_name(kind: str) -> str:
    return {"point": tr("points"), "line": tr("lines"), "polygon": tr("polygons")}[kind]


def _geom_class(geom) -> str | None:
    for name, _, types in GEOM_TYPES:
        if geom.geom_type in types:
            return name
    return None


def _explode(geom):
    """A geometry collection as its members (others: itself)."""
    if geom.geom_type == "GeometryCollection":
        for g in geom.geoms:
            yield from _explode(g)
    else:
        yield geom


def memory_layer(kind: str, epsg: int, name: str, fields: list[tuple[str, QVariant.Type]]) -> QgsVectorLayer:
    wkb = dict((n, w) for n, w, _ in GEOM_TYPES)[kind]
    layer = QgsVectorLayer(f"{wkb}?crs=EPSG:{epsg}", name, "memory")
    layer.dataProvider().addAttributes([QgsField(n, t) for n, t in fields])
    layer.updateFields()
    return layer


def _to_qgs(geom) -> QgsGeometry:
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


def _text_format(size: float = 9.0, bold: bool = False, color: str = "#111111") -> QgsTextFormat:
    fmt = QgsTextFormat()
    font = QFont("Sans Serif")
    font.setBold(bold)
    fmt.setFont(font)
    fmt.setSize(size)
    fmt.setColor(QColor(color))
    buf = QgsTextBufferSettings()
    buf.setEnabled(True)
    buf.setSize(1.0)
    buf.setColor(QColor("white"))
    fmt.setBuffer(buf)
    return fmt


def set_labels(
    layer: QgsVectorLayer,
    expression: str,
    size: float = 9.0,
    bold: bool = False,
    show_all: bool = False,
    priority: int = 5,
) -> None:
    pal = QgsPalLayerSettings()
    pal.priority = priority  # verdict labels are placed first, names then find free room
    pal.fieldName = expression
    pal.isExpression = True
    if show_all:  # verdict labels must never be dropped for lack of room
        overlap = getattr(getattr(Qgis, "LabelOverlapHandling", None), "AllowOverlapIfRequired", None)
        if overlap is not None and hasattr(pal, "placementSettings"):  # QGIS >= 3.26
            placement = pal.placementSettings()
            placement.setOverlapHandling(overlap)
            pal.setPlacementSettings(placement)
        else:
            pal.displayAll = True
    pal.setFormat(_text_format(size, bold))
    layer.setLabeling(QgsVectorLayerSimpleLabeling(pal))
    layer.setLabelsEnabled(True)


def _symbol(
    kind: str,
    color: str,
    width: float = 0.6,
    size: float = 2.6,
    fill_alpha: int = 90,
    dashed: bool = False,
    outline: str | None = None,
):
    if kind == "point":
        return QgsMarkerSymbol.createSimple(
            {
                "name": "circle",
                "color": color,
                "size": str(size),
                "outline_color": outline or "white",
                "outline_width": "0.3",
            }
        )
    if kind == "line":
        return QgsLineSymbol.createSimple(
            {
                "line_color": color,
                "line_width": str(width),
                "line_style": "dash" if dashed else "solid",
                "capstyle": "round",
            }
        )
    c = QColor(color)
    return QgsFillSymbol.createSimple(
        {
            "color": f"{c.red()},{c.green()},{c.blue()},{fill_alpha}",
            "outline_color": outline or color,
            "outline_width": str(width),
            "outline_style": "dash" if dashed else "solid",
            "style": "solid" if fill_alpha else "no",
        }
    )


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


def _add(layer: QgsVectorLayer, group: QgsLayerTreeGroup) -> QgsVectorLayer:
    QgsProject.instance().addMapLayer(layer, False)
    group.addLayer(layer)
    return layer


# ------------------------------------------------------------------------- scene


def scene_layers(
    instance: dict, group: QgsLayerTreeGroup, context: ContextSource | None = None, name_prefix: str = ""
) -> list[QgsVectorLayer]:
    """The instance's scene as one layer per geometry type (styled by role: the target F0
    emphasised), labelled with feature ids; optional muted OSM context underneath."""
    epsg = int(instance["crs"]["epsg"])
    target = instance.get("target", "F0")
    rows: dict[str, list] = {k: [] for k, _, _ in GEOM_TYPES}
    for f in instance["scene"]["features"]:
        props = dict(f.get("properties") or {})
        fid = f.get("id") or props.get("id")
        geom = shape(f["geometry"])
        kind = _geom_class(geom)
        if kind:
            extra = {k: v for k, v in props.items() if k not in ("id", "kind")}
            rows[kind].append(
                (
                    fid,
                    props.get("kind", ""),
                    "target" if fid == target else "feature",
                    json.dumps(extra, ensure_ascii=False) if extra else "",
                    geom,
                )
            )
    fields = [
        ("id", QVariant.String),
        ("kind", QVariant.String),
        ("role", QVariant.String),
        ("attributes", QVariant.String),
    ]
    layers = []
    for kind, _, _ in GEOM_TYPES:  # added top-down: points above lines above polygons
        if not rows[kind]:
            continue
        layer = memory_layer(kind, epsg, f"{name_prefix}{tr('scene')} {kind_name(kind)}", fields)
        feats = []
        for fid, fkind, role, attrs, geom in rows[kind]:
            qf = QgsFeature(layer.fields())
            qf.setAttributes([fid, fkind, role, attrs])
            qf.setGeometry(_to_qgs(geom))
            feats.append(qf)
        layer.dataProvider().addFeatures(feats)
        layer.setRenderer(
            QgsCategorizedSymbolRenderer(
                "role",
                [
                    QgsRendererCategory(
                        "target",
                        _symbol(kind, TARGET_COLOR, width=1.2, size=4.0, fill_alpha=110),
                        tr("target (F0)"),
                    ),
                    QgsRendererCategory(
                        "feature",
                        _symbol(kind, FEATURE_COLOR, width=0.7, size=3.0, fill_alpha=60),
                        tr("other features"),
                    ),
                ],
            )
        )
        set_labels(layer, '"id"', size=10.0, bold=True)
        layers.append(_add(layer, group))
    if context is not None:
        ctx_group = group.addGroup(tr("OSM context"))
        layers += context.layers(instance, ctx_group)
    return layers


class ContextSource:
    """The benchmark's real OSM context (context.geojsonl), indexed once, drawn muted around
    the instance being shown."""

    MARGIN_M = 150.0

    def __init__(self, path: Path):
        self.geoms, self.pools = [], []
        if path.is_file():
            with path.open(encoding="utf-8") as fh:
                for line in fh:
                    if not line.strip():
                        continue
                    try:
                        f = json.loads(line)
                        g = shape(f["geometry"])
                    except (ValueError, KeyError, TypeError, AttributeError, shapely.errors.GEOSException):
                        continue
                    if not g.is_empty:
                        self.geoms.append(g)
                        self.pools.append((f.get("properties") or {}).get("pool", ""))
        self.tree = shapely.STRtree(self.geoms) if self.geoms else None

    def __len__(self) -> int:
        return len(self.geoms)

    def layers(self, instance: dict, group: QgsLayerTreeGroup) -> list[QgsVectorLayer]:
        if self.tree is None:
            return []
        scene = shapely.GeometryCollection([shape(f["geometry"]) for f in instance["scene"]["features"]])
        box = shapely.box(*scene.bounds).buffer(self.MARGIN_M, join_style=2)
        idx = sorted(self.tree.query(box, predicate="intersects"))
        epsg = int(instance["crs"]["epsg"])
        out = []
        for kind, _, _ in GEOM_TYPES:
            chosen = [i for i in idx if _geom_class(self.geoms[i]) == kind and self.pools[i] != "water"]
            if chosen:
                sym = _symbol(kind, "#b8b8b8", width=0.3, size=1.4, fill_alpha=40, outline="#c8c8c8")
                out.append(self._layer(kind, epsg, f"{tr('context')} {kind_name(kind)}", chosen, sym, group))
        # Sea, lakes and basins: their own layer at the bottom, in the headless maps' water colour
        # (a grey wash over the harbour would read as land).
        water = [i for i in idx if self.pools[i] == "water" and _geom_class(self.geoms[i]) == "polygon"]
        if water:
            sym = _symbol("polygon", "#c6dbe9", width=0.0, fill_alpha=255, outline="#c6dbe9")
            out.append(self._layer("polygon", epsg, f"{tr('context')} {tr('water')}", water, sym, group))
        return out

    def _layer(self, kind: str, epsg: int, name: str, chosen: list[int], sym, group) -> QgsVectorLayer:
        layer = memory_layer(kind, epsg, name, [("pool", QVariant.String)])
        feats = []
        for i in chosen:
            qf = QgsFeature(layer.fields())
            qf.setAttributes([self.pools[i]])
            qf.setGeometry(_to_qgs(self.geoms[i]))
            feats.append(qf)
        layer.dataProvider().addFeatures(feats)
        layer.setRenderer(QgsSingleSymbolRenderer(sym))
        layer.setOpacity(0.6)
        return _add(layer, group)


# ------------------------------------------------------------------------- edits


def _qvariant_type(value):
    if isinstance(value, bool):
        return QVariant.Bool
    if isinstance(value, int):
        return QVariant.LongLong
    if isinstance(value, float):
        return QVariant.Double
    return QVariant.String


def edit_layers(
    instance: dict, edited_scene: dict, group: QgsLayerTreeGroup, title: str, attributes: tuple[str, ...] = ()
) -> list[QgsVectorLayer]:
    """The edited target beside a ghost of the original one. `attributes`: extra fields on the
    edited layer (the target's attributes an analyst may change in the attribute form)."""
    epsg = int(instance["crs"]["epsg"])
    target = instance.get("target", "F0")
    out = []
    for label, fc, style in (
        (tr("original {id} (ghost)").format(id=target), instance["scene"], "ghost"),
        (title, edited_scene, "edited"),
    ):
        try:
            feature = scene_feature(fc, target)
        except KeyError:
            continue
        geom = shape(feature["geometry"])
        kind = _geom_class(geom)
        if kind is None:  # a geometry collection: nothing to edit with QGIS's tools
            continue
        props = feature.get("properties") or {}
        extra = [a for a in attributes if a not in ("id", "state")] if style == "edited" else []
        fields = [("id", QVariant.String), ("state", QVariant.String)] + [
            (a, _qvariant_type(props.get(a, ""))) for a in extra
        ]
        layer = memory_layer(kind, epsg, label, fields)
        qf = QgsFeature(layer.fields())
        qf.setAttributes([target, style] + [props.get(a) for a in extra])
        qf.setGeometry(_to_qgs(geom))
        layer.dataProvider().addFeatures([qf])
        if style == "ghost":
            sym = _symbol(kind, "#777777", width=0.6, size=3.5, fill_alpha=0, dashed=True, outline="#777777")
        else:
            sym = _symbol(kind, "#ff7f00", width=1.4, size=4.5, fill_alpha=120, outline="#b35900")
        layer.setRenderer(QgsSingleSymbolRenderer(sym))
        set_labels(
            layer,
            f"'{target}' || if(\"state\" = 'ghost', ' ({tr('before')})', ' ({tr('after')})')",
            size=10.0,
            bold=style == "edited",
            priority=3,
        )
        out.append(_add(layer, group))
    return out


# ------------------------------------------------------------------------- constraints

CONSTRAINT_FIELDS = [
    ("constraint", QVariant.Int),
    ("text", QVariant.String),
    ("measure", QVariant.String),
    ("role", QVariant.String),
    ("measured", QVariant.String),
    ("passed", QVariant.Bool),
    ("label", QVariant.String),
]


def constraint_features(views) -> dict[str, list[tuple[list, BaseGeometry]]]:
    """Rows per geometry class: ([attributes], shapely geometry); each constraint's label sits on
    one part only (its measured part if any). Constraints measured along the same geometry (a
    distance and a disjointness over one shortest line) share one stacked label, so neither hides
    the other."""
    rows: dict[str, list[tuple[list, BaseGeometry]]] = {k: [] for k, _, _ in GEOM_TYPES}
    label_at: dict[bytes, list] = {}
    order = ("measured", "intersection", "violation", "allowed", "limit", "marker", "reference")
    for v in views:
        parts = [(r, g) for r, g in v.parts for g in _explode(g) if not g.is_empty]
        labelled = min(range(len(parts)), key=lambda i: order.index(parts[i][0])) if parts else None
        for i, (role, geom) in enumerate(parts):
            kind = _geom_class(geom)
            if kind is None:
                continue
            attrs = [v.index + 1, v.text, v.measure, role, v.measured_text, bool(v.passed), ""]
            if i == labelled:
                # Language-neutral marks keep map labels short in every translation.
                text = f"#{v.index + 1} {'✔' if v.passed else '✘'} {v.measured_text}"
                key = shapely.normalize(geom).wkb
                if key in label_at:
                    label_at[key][6] += "\n" + text
                else:
                    attrs[6] = text
                    label_at[key] = attrs
            rows[kind].append((attrs, geom))
    return rows


def _constraint_renderer(kind: str, present: set[tuple[str, bool]] | None = None) -> QgsRuleBasedRenderer:
    """Rules per (role, pass/fail); only the combinations present get a rule, so the legend
    lists what is on the map."""
    root = QgsRuleBasedRenderer.Rule(None)
    for passed, color in ((True, PASS_COLOR), (False, FAIL_COLOR)):
        cond = '"passed"' if passed else 'NOT "passed"'
        styles = {
            "point": [
                ("marker", _symbol("point", color, size=2.4)),
                ("intersection", _symbol("point", "#c51b7d", size=3.6, outline="black")),
                ("violation", _symbol("point", "#c51b7d", size=3.6, outline="black")),
                (None, _symbol("point", color, size=2.0)),
            ],
            "line": [
                ("measured", _symbol("line", color, width=1.1)),
                ("limit", _symbol("line", color, width=0.4, dashed=True)),
                ("reference", _symbol("line", "#555555", width=0.8)),
                ("intersection", _symbol("line", "#c51b7d", width=1.6)),
                ("violation", _symbol("line", "#c51b7d", width=1.6)),
                (None, _symbol("line", color, width=0.6)),
            ],
            "polygon": [
                ("allowed", _symbol("polygon", color, width=0.3, fill_alpha=45)),
                ("intersection", _symbol("polygon", "#c51b7d", width=0.8, fill_alpha=140)),
                ("violation", _symbol("polygon", "#c51b7d", width=0.8, fill_alpha=140)),
                ("reference", _symbol("polygon", "#555555", width=0.6, fill_alpha=0)),
                (None, _symbol("polygon", color, width=0.5, fill_alpha=30)),
            ],
        }[kind]
        named = [r for r, _ in styles if r]
        for role, sym in styles:
            if present is not None and not any(
                p == passed and (r == role if role else r not in named) for r, p in present
            ):
                continue
            expr = (
                f"{cond} AND \"role\" = '{role}'"
                if role
                else f"{cond} AND \"role\" NOT IN ({', '.join(repr(r) for r, _ in styles if r)})"
            )
            rule = QgsRuleBasedRenderer.Rule(
                sym, 0, 0, expr, f"{role or tr('other')} ({tr('pass') if passed else tr('fail')})"
            )
            root.appendChild(rule)
    return QgsRuleBasedRenderer(root)


def constraint_layers(instance: dict, views, group: QgsLayerTreeGroup) -> list[QgsVectorLayer]:
    """The constraint explanation parts, one layer per geometry class, coloured by pass / fail,
    each constraint labelled with its measured value and verdict."""
    epsg = int(instance["crs"]["epsg"])
    rows = constraint_features(views)
    out = []
    for kind, _, _ in GEOM_TYPES:
        if not rows[kind]:
            continue
        layer = memory_layer(kind, epsg, f"{tr('constraints')} ({kind_name(kind)})", CONSTRAINT_FIELDS)
        feats = []
        for attrs, geom in rows[kind]:
            qf = QgsFeature(layer.fields())
            qf.setAttributes(attrs)
            qf.setGeometry(_to_qgs(geom))
            feats.append(qf)
        layer.dataProvider().addFeatures(feats)
        layer.setRenderer(_constraint_renderer(kind, {(a[3], a[5]) for a, _ in rows[kind]}))
        set_labels(layer, '"label"', size=9.0, bold=True, show_all=True, priority=10)
        out.append(_add(layer, group))
    return out


def collapse_legends(group: QgsLayerTreeGroup) -> None:
    """Rule lists are long: keep the layer entries, fold their symbol lists (again once the layer
    tree view has expanded the new nodes)."""

    def fold():
        try:
            for node in group.findLayers():
                node.setExpanded(False)
        except RuntimeError:  # the group was removed meanwhile
            pass

    fold()
    QTimer.singleShot(0, fold)
    QTimer.singleShot(400, fold)


def crs_of(instance: dict) -> QgsCoordinateReferenceSystem:
    return QgsCoordinateReferenceSystem(f"EPSG:{int(instance['crs']['epsg'])}")
