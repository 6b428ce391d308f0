"""Numbered keys: every constraint's number and every feature's id drawn as a marker symbol, so
each stays identifiable on the canvas and in exports whatever the label engine drops (a symbol
is never removed for a collision, a label is). Constraint numbers match the "#n" of the labels,
the dock's verdict panel and the export's key panel.

    constraint key   a disc in the verdict's colour with its number (#2 → "2")
    feature key      the feature's id in dark type with a white halo (F1), beside the feature
"""

from __future__ import annotations

import shapely
from qgis.core import (
    QgsEllipseSymbolLayer,
    QgsFeature,
    QgsFontMarkerSymbolLayer,
    QgsLayerTreeGroup,
    QgsMarkerSymbol,
    QgsPalLayerSettings,
    QgsProperty,
    QgsRuleBasedRenderer,
    QgsSymbolLayer,
    QgsVectorLayer,
    QgsVectorLayerSimpleLabeling,
)
from qgis.PyQt.QtGui import QColor
from shapely.geometry import Point, shape
from shapely.geometry.base import BaseGeometry

from scoring.formats.records import Instance

from ..core import styles
from ..core.layer_util import add_to_group, explode, memory_layer, to_qgs
from ..utils.compat import FIELD_BOOL, FIELD_INT, FIELD_STRING
from ..utils.i18n import tr

KEY_FIELDS = [
    ("key", FIELD_STRING),  # what the marker shows: "2", "F1"
    ("kind", FIELD_STRING),  # constraint | feature
    ("passed", FIELD_BOOL),
    ("slot", FIELD_INT),  # keys on one anchor sit side by side, this many places along
    ("text", FIELD_STRING),  # the requirement and result (constraints) or the feature's kind
    ("beside", FIELD_BOOL),  # a feature tag beside its point or line (inside a polygon: False)
]
KEY_SIZE_MM = 5.0
SLOT_MM = 5.4  # one key's width: keys sharing an anchor never cover each other
FEATURE_TAG_MM = (7.6, 4.4)
FEATURE_SLOT_MM = 8.0
FEATURE_SHIFT_MM = 4.2
OBSTACLE_FACTOR = 2.0  # QGIS's maximum: a label never covers a key while another place is free
# The part a constraint's key sits on, first found wins (as its label: constraint_layers).
KEY_ORDER = ("measured", "intersection", "violation", "allowed", "forbidden", "limit", "marker", "reference")


def _prop(name: str):
    """QgsSymbolLayer's data-defined property key on 3.22 (unscoped) and 3.30+ (scoped)."""
    scoped = getattr(QgsSymbolLayer, "Property", None)
    return (
        getattr(scoped, name)
        if scoped is not None and hasattr(scoped, name)
        else getattr(QgsSymbolLayer, f"Property{name}")
    )


def anchor(geom: BaseGeometry) -> Point:
    """Where a key sits: a point itself, a line's middle, a polygon's northernmost vertex (its
    edge, not its middle: a zone's middle is the feature it is drawn around)."""
    part = next(iter(explode(geom)), geom)
    if part.geom_type.startswith("Multi"):
        part = part.geoms[0]
    if part.geom_type == "Point":
        return Point(part.x, part.y)
    if part.geom_type == "LineString":
        return part.interpolate(0.5, normalized=True)
    coords = list(part.exterior.coords)
    return Point(max(coords, key=lambda c: (c[1], c[0]))[:2])


def constraint_keys(views, label_text) -> list[tuple[list, Point]]:
    rows = []
    for v in views:
        parts = [(r, g) for r, g in v.parts if g is not None and not g.is_empty]
        ranked = sorted((p for p in parts if p[0] in KEY_ORDER), key=lambda p: KEY_ORDER.index(p[0]))
        if not ranked:
            continue
        rows.append(
            ([str(v.index + 1), "constraint", bool(v.passed), 0, label_text(v), False], anchor(ranked[0][1]))
        )
    return _slotted(rows)


def feature_keys(instance: Instance) -> list[tuple[list, Point]]:
    target = instance.get("target", "F0")
    rows = []
    for f in instance["scene"]["features"]:
        props = f.get("properties") or {}
        fid = f.get("id") or props.get("id")
        if fid == target:  # F0's label is always placed (test_drawings), in the target's style
            continue
        geom = shape(f["geometry"])
        # Inside a polygon (its edge is where the measured lines end and their keys sit).
        inside = geom.geom_type.endswith("Polygon")
        where = geom.representative_point() if inside else anchor(geom)
        rows.append(([str(fid), "feature", True, 0, str(props.get("kind", "")), not inside], where))
    return _slotted(rows)


def _slotted(rows: list[tuple[list, Point]]) -> list[tuple[list, Point]]:
    """Keys on one spot get successive slots (drawn side by side)."""
    seen: dict[bytes, int] = {}
    for attrs, point in rows:
        spot = shapely.set_precision(point, 0.5).wkb
        attrs[3] = seen.get(spot, 0)
        seen[spot] = attrs[3] + 1
    return rows


def _key_symbol(fill: str | None) -> QgsMarkerSymbol:
    """A disc in the verdict's colour with a white number (constraints), or a white tag with a
    dark outline and the id in dark type (features: "F12" needs a tag's width)."""
    slot = f'"slot" * {SLOT_MM if fill else FEATURE_SLOT_MM}'
    # Features: up and right of a point's or line's own symbol, never on it.
    shift = f'if("beside", {FEATURE_SHIFT_MM}, 0)'
    offset = QgsProperty.fromExpression(
        f"concat({slot}, ',', 0)" if fill else f"concat({shift} + {slot}, ',', -1 * {shift})"
    )
    if fill is not None:
        sym = QgsMarkerSymbol.createSimple(
            {
                "name": "circle",
                "color": fill,
                "size": str(KEY_SIZE_MM),
                "outline_color": "white",
                "outline_width": "0.4",
            }
        )
    else:
        tag = QgsEllipseSymbolLayer()
        tag.setShape(QgsEllipseSymbolLayer.Shape.Rectangle)  # setShape: QGIS 3.20 and later
        tag.setSymbolWidth(FEATURE_TAG_MM[0])
        tag.setSymbolHeight(FEATURE_TAG_MM[1])
        tag.setFillColor(QColor("white"))
        tag.setStrokeColor(QColor("#333333"))
        tag.setStrokeWidth(0.3)
        sym = QgsMarkerSymbol()
        sym.changeSymbolLayer(0, tag)
    sym.symbolLayer(0).setDataDefinedProperty(_prop("Offset"), offset)
    text = QgsFontMarkerSymbolLayer("Sans Serif", "", KEY_SIZE_MM * (0.6 if fill else 0.62))
    text.setColor(QColor("white" if fill else "#111111"))
    text.setStrokeWidth(0.0)
    text.setFontStyle("Bold")
    text.setDataDefinedProperty(_prop("Character"), QgsProperty.fromField("key"))
    text.setDataDefinedProperty(_prop("Offset"), offset)
    sym.appendSymbolLayer(text)
    return sym


FEATURE_RULE = "\"kind\" = 'feature'"
HOLDS_RULE = '"kind" = \'constraint\' AND "passed"'
BROKEN_RULE = '"kind" = \'constraint\' AND NOT "passed"'


def key_renderer(kinds: set[tuple[str, bool]] | None = None) -> QgsRuleBasedRenderer:
    """One rule per kind of key; with ``kinds`` ((kind, passed) present) only those, so the
    legend lists what the layer holds."""
    root = QgsRuleBasedRenderer.Rule(None)
    for kind, passed, expr, fill, name in (
        ("feature", True, FEATURE_RULE, None, tr("feature id")),
        ("constraint", True, HOLDS_RULE, styles.PASS_COLOR, tr("constraint number: holds")),
        ("constraint", False, BROKEN_RULE, styles.FAIL_COLOR, tr("constraint number: broken")),
    ):
        if kinds is None or (kind, passed) in kinds:
            root.appendChild(QgsRuleBasedRenderer.Rule(_key_symbol(fill), 0, 0, expr, name))
    return QgsRuleBasedRenderer(root)


def block_labels(layer: QgsVectorLayer) -> None:
    """QGIS's "Blocking" labelling: no label of its own, but every other label keeps off the
    keys' symbols (labels are drawn above all symbols, so one could hide a key)."""
    pal = QgsPalLayerSettings()
    pal.drawLabels = False
    pal.fieldName = '"key"'
    pal.isExpression = True
    obstacle = pal.obstacleSettings()
    obstacle.setIsObstacle(True)
    obstacle.setFactor(OBSTACLE_FACTOR)
    layer.setLabeling(QgsVectorLayerSimpleLabeling(pal))
    layer.setLabelsEnabled(True)


def keys_layer(instance: Instance, rows, group: QgsLayerTreeGroup, name: str) -> QgsVectorLayer | None:
    """The keys as a point layer on top of ``group``."""
    if not rows:
        return None
    layer = memory_layer("point", int(instance["crs"]["epsg"]), name, KEY_FIELDS)
    feats = []
    for attrs, point in rows:
        qf = QgsFeature(layer.fields())
        qf.setAttributes(attrs)
        qf.setGeometry(to_qgs(point))
        feats.append(qf)
    layer.dataProvider().addFeatures(feats)
    layer.setRenderer(key_renderer({(a[1], bool(a[2])) for a, _ in rows}))
    block_labels(layer)
    # On top of the group: keys are drawn over every drawing they name.
    return add_to_group(layer, group, top=True)


def key_lines(views, label_text, instance: Instance) -> list[str]:
    """The key panel's lines: every constraint by number, then every feature by id."""
    lines = [label_text(v) for v in views]
    for f in instance["scene"]["features"]:
        props = f.get("properties") or {}
        fid = f.get("id") or props.get("id")
        kind = props.get("kind") or ""
        role = tr("the feature to edit") if fid == instance.get("target", "F0") else kind
        lines.append(f"{fid}: {role}" if role else str(fid))
    return lines
