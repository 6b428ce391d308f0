"""The labels of a drawn edit, placed by the plugin for the canvas's frame instead of by QGIS's
label engine (which drops a label it finds no room for, and draws a forced one over others).

Placement is scoring's own (scoring.render.labels.placement, the headless maps' placer): every
label in the frame, displaced with a leader line when it cannot sit beside its drawing, never on
the edited target, a key or another label. The plugin only measures the label boxes and converts
between map units and the canvas's pixels; the labels are then drawn where they were placed
("always show": the room was found here) as a point layer, their leader lines as a line layer.
Placed for the frame shown when drawn: a new zoom keeps the labels where they were."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

import numpy as np
import shapely
from qgis.core import (
    QgsFeature,
    QgsLayerTreeGroup,
    QgsProperty,
    QgsRectangle,
    QgsRuleBasedLabeling,
    QgsSingleSymbolRenderer,
    QgsVectorLayer,
)
from qgis.PyQt.QtGui import QFont, QFontMetricsF, QGuiApplication
from shapely.geometry import LineString, Point, box, shape
from shapely.geometry.base import BaseGeometry
from shapely.ops import nearest_points

from scoring.formats.records import Instance
from scoring.render.labels.placement import LabelItem, Placement, obstacle_for, place_labels

from ..utils.compat import FIELD_STRING, LABEL_OVER_POINT, first
from ..utils.i18n import tr
from . import keys, styles
from .layer_util import add_to_group, explode, memory_layer, scene_feature, to_qgs

LABEL_FIELDS = [
    ("key", FIELD_STRING),
    ("kind", FIELD_STRING),
    ("text", FIELD_STRING),
    ("color", FIELD_STRING),
]
CONSTRAINT_PT, TARGET_PT = 8.5, 10.0
BUFFER_MM = 1.0  # the labels' white halo (styles.text_format), part of what must not overlap
CLEARANCE_MM = {"Point": 2.4, "LineString": 1.0, "Polygon": 0.6}
FEATURE_CLEARANCE_MM = 0.8  # how far other features keep labels off
EDGE_PX = 2.0  # labels stay this far inside the frame
FURNITURE = "spatialgap/furniture"  # labels and leader lines: no legend entry in an export
PROP_COLOR = first("QgsPalLayerSettings.Property.Color", "QgsPalLayerSettings.Color")


@dataclass
class CanvasView:
    """The frame labels are placed for: its extent in the layers' CRS and the canvas's pixels."""

    extent: QgsRectangle
    width_px: int
    height_px: int
    dpi: float

    @property
    def px_per_mm(self) -> float:
        return self.dpi / 25.4

    @property
    def unit_px(self) -> float:
        """Map units per pixel."""
        return self.extent.width() / self.width_px

    def to_px(self, geom: BaseGeometry) -> BaseGeometry:
        x0, y1, m = self.extent.xMinimum(), self.extent.yMaximum(), self.unit_px
        return shapely.transform(geom, lambda c: np.column_stack(((c[:, 0] - x0) / m, (y1 - c[:, 1]) / m)))

    def to_map(self, x: float, y: float) -> tuple[float, float]:
        return self.extent.xMinimum() + x * self.unit_px, self.extent.yMaximum() - y * self.unit_px


@dataclass
class PlacedLabel:
    key: str
    kind: str  # target | constraint
    text: str
    color: str
    centre: tuple[float, float]  # map units
    leader: tuple[tuple[float, float], tuple[float, float]] | None
    fallback: bool  # no free place was found: it may touch something


def text_size(text: str, points: float, view: CanvasView) -> tuple[float, float]:
    """A label's box in the canvas's pixels, halo included (QGIS draws type at the canvas's dpi;
    the font metrics are the screen's)."""
    font = QFont("Sans Serif")
    font.setPointSizeF(points)
    font.setBold(True)
    metrics = QFontMetricsF(font)
    screen = QGuiApplication.primaryScreen()
    scale = view.dpi / (screen.logicalDotsPerInch() if screen is not None else 96.0)
    lines = text.split("\n")
    width = max(metrics.horizontalAdvance(line) for line in lines) * scale
    height = metrics.lineSpacing() * len(lines) * scale
    pad = 2 * BUFFER_MM * view.px_per_mm
    return width + pad, height + pad


def _part_for_label(view_parts) -> BaseGeometry | None:
    """The part a constraint's label belongs to (its key's part: keys.KEY_ORDER)."""
    parts = [(r, g) for r, g in view_parts for g in explode(g) if g is not None and not g.is_empty]
    ranked = sorted((p for p in parts if p[0] in keys.KEY_ORDER), key=lambda p: keys.KEY_ORDER.index(p[0]))
    return ranked[0][1] if ranked else None


def _in_frame(geom: BaseGeometry, frame: BaseGeometry) -> BaseGeometry:
    """The part of a pixel geometry inside the frame, else the frame's point nearest to it."""
    inside = geom.intersection(frame)
    if not inside.is_empty:
        return inside
    return nearest_points(frame.buffer(-EDGE_PX), geom)[0]


def _clearance(geom: BaseGeometry, view: CanvasView) -> float:
    return CLEARANCE_MM.get(geom.geom_type.replace("Multi", ""), 1.0) * view.px_per_mm


def _key_obstacles(instance: Instance, views, label_text, view: CanvasView) -> dict[str, BaseGeometry]:
    """Every key's symbol as drawn (keys.py: discs and tags at their slot offsets), in pixels."""
    mm = view.px_per_mm
    out = {}
    for n, (attrs, point) in enumerate(keys.constraint_keys(views, label_text)):
        p = view.to_px(point)
        centre = Point(p.x + attrs[3] * keys.SLOT_MM * mm, p.y)
        out[f"key:{n}"] = centre.buffer((keys.KEY_SIZE_MM / 2 + 0.4) * mm)
    for n, (attrs, point) in enumerate(keys.feature_keys(instance)):
        p = view.to_px(point)
        shift = keys.FEATURE_SHIFT_MM if attrs[5] else 0.0
        cx, cy = p.x + (shift + attrs[3] * keys.FEATURE_SLOT_MM) * mm, p.y - shift * mm
        w, h = (keys.FEATURE_TAG_MM[0] / 2 + 0.3) * mm, (keys.FEATURE_TAG_MM[1] / 2 + 0.3) * mm
        out[f"tag:{n}"] = box(cx - w, cy - h, cx + w, cy + h)
    return out


def place(instance: Instance, views, edited_scene, view: CanvasView, label_text) -> list[PlacedLabel]:
    """Every label of the drawing placed: the edited target's "after" first, then the target as
    it was, then each constraint's "#n …" sentence."""
    target = instance.get("target", "F0")
    frame = box(EDGE_PX, EDGE_PX, view.width_px - EDGE_PX, view.height_px - EDGE_PX)
    specs: list[tuple[str, str, str, str, float, BaseGeometry]] = []  # key, kind, text, colour, pt, px
    obstacles: dict[str, BaseGeometry] = {}
    original = view.to_px(shape(scene_feature(instance["scene"], target)["geometry"]))
    if edited_scene is not None:
        try:
            after = view.to_px(shape(scene_feature(edited_scene, target)["geometry"]))
        except KeyError:  # the edit removed the target: nothing to label there
            after = None
        if after is not None and not after.is_empty:
            label = f"{target} ({tr('after')})"
            specs.append(("after", "target", label, "#111111", TARGET_PT, after))
            obstacles["after"] = obstacle_for(after, _clearance(after, view))
        specs.append(("target", "target", f"{target} ({tr('before')})", "#555555", TARGET_PT, original))
    else:
        specs.append(("target", "target", target, "#111111", TARGET_PT, original))
    obstacles["target"] = obstacle_for(original, _clearance(original, view))
    for f in instance["scene"]["features"]:
        fid = f.get("id") or (f.get("properties") or {}).get("id")
        if fid != target:
            geom = view.to_px(shape(f["geometry"]))
            obstacles[f"feature:{fid}"] = obstacle_for(geom, FEATURE_CLEARANCE_MM * view.px_per_mm)
    obstacles.update(_key_obstacles(instance, views, label_text, view))
    for v in views:
        part = _part_for_label(v.parts)
        if part is not None:
            text = textwrap.fill(label_text(v), styles.LABEL_WRAP_CHARS)
            hue = styles.constraint_hue(v.index + 1)
            specs.append((f"#{v.index + 1}", "constraint", text, hue, CONSTRAINT_PT, view.to_px(part)))
    items = [
        LabelItem(key, _in_frame(geom, frame), text_size(text, pt, view), _clearance(geom, view))
        for key, _kind, text, _color, pt, geom in specs
    ]
    placed = place_labels(items, frame.bounds, obstacles)
    return [_placed(spec, placed[spec[0]], view) for spec in specs]


def _placed(spec, pl: Placement, view: CanvasView) -> PlacedLabel:
    key, kind, text, color, _pt, _geom = spec
    x0, y0, x1, y1 = pl.bbox
    leader = None
    if pl.leader:
        (ax, ay), (bx, by) = pl.leader
        leader = (view.to_map(ax, ay), view.to_map(bx, by))
    return PlacedLabel(key, kind, text, color, view.to_map((x0 + x1) / 2, (y0 + y1) / 2), leader, pl.fallback)


def _labeling() -> QgsRuleBasedLabeling:
    """Each label centred on its point, always shown (its room was found by `place`), the
    target's drawn above the sentences."""
    root = QgsRuleBasedLabeling.Rule(None)
    for expr, points, z in (
        ("\"kind\" = 'target'", TARGET_PT, 10.0),
        ("\"kind\" <> 'target'", CONSTRAINT_PT, 5.0),
    ):
        pal = styles.label_settings("point", '"text"', size=points, bold=True, priority=10, z_index=z)
        pal.placement = LABEL_OVER_POINT
        pal.dist = 0.0
        pal.displayAll = True
        pal.obstacleSettings().setIsObstacle(False)
        pal.multilineAlign = first(
            "Qgis.LabelMultiLineAlignment.Center", "QgsPalLayerSettings.MultiLineAlign.MultiCenter"
        )
        pal.dataDefinedProperties().setProperty(PROP_COLOR, QgsProperty.fromField("color"))
        rule = QgsRuleBasedLabeling.Rule(pal)
        rule.setFilterExpression(expr)
        root.appendChild(rule)
    return QgsRuleBasedLabeling(root)


def label_layers(
    instance: Instance, placed: list[PlacedLabel], group: QgsLayerTreeGroup
) -> list[QgsVectorLayer]:
    """The placed labels (a point layer with no symbol: only its labels show) on top of `group`,
    their leader lines under them."""
    epsg = int(instance["crs"]["epsg"])
    out = []
    leaders = [p for p in placed if p.leader is not None]
    if leaders:
        lines = memory_layer("line", epsg, tr("leader lines"), [("key", FIELD_STRING)])
        feats = []
        for p in leaders:
            qf = QgsFeature(lines.fields())
            qf.setAttributes([p.key])
            qf.setGeometry(to_qgs(LineString(p.leader)))
            feats.append(qf)
        lines.dataProvider().addFeatures(feats)
        lines.setRenderer(QgsSingleSymbolRenderer(styles.symbol("line", "#333333", width=0.3)))
        lines.setCustomProperty(FURNITURE, True)
        out.append(add_to_group(lines, group, top=True))
    layer = memory_layer("point", epsg, tr("labels"), LABEL_FIELDS)
    feats = []
    for p in placed:
        qf = QgsFeature(layer.fields())
        qf.setAttributes([p.key, p.kind, p.text, p.color])
        qf.setGeometry(to_qgs(Point(p.centre)))
        feats.append(qf)
    layer.dataProvider().addFeatures(feats)
    layer.setRenderer(QgsSingleSymbolRenderer(styles.symbol("point", "#000000", size=0.0)))
    layer.renderer().symbol().setOpacity(0.0)
    layer.setCustomProperty(FURNITURE, True)
    layer.setLabeling(_labeling())
    layer.setLabelsEnabled(True)
    out.append(add_to_group(layer, group, top=True))
    return out
