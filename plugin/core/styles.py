"""The look of the plugin's layers: colours, symbols and labels shared by the dock and Processing
(no geometry here: shapes come from the scene GeoJSON and scoring.constraints.explain)."""

from __future__ import annotations

from qgis.core import (
    QgsFillSymbol,
    QgsLineSymbol,
    QgsMarkerLineSymbolLayer,
    QgsMarkerSymbol,
    QgsPalLayerSettings,
    QgsTextBufferSettings,
    QgsTextFormat,
    QgsVectorLayer,
    QgsVectorLayerSimpleLabeling,
)
from qgis.PyQt.QtGui import QColor, QFont

from ..utils.compat import (
    GEOM_LINE,
    GEOM_POINT,
    LABEL_AROUND_POINT,
    LABEL_HORIZONTAL,
    LABEL_OVER_POINT,
    LINE_FIRST_VERTEX,
    LINE_INTERVAL,
    LINE_LAST_VERTEX,
)
from ..utils.i18n import tr

TARGET_COLOR = "#d7301f"
FEATURE_COLOR = "#2b6cb0"
PASS_COLOR = "#1a9850"
FAIL_COLOR = "#d73027"
# Allowed zones and their edges: one fixed colour whatever the verdict (the ✔ / ✘ says it).
ZONE_COLOR = "#6a51a3"
# Zones of negated constraints ("not within 20 m"): where the target must not go, hatched in a
# colour of its own so it never reads as an allowed zone.
FORBIDDEN_COLOR = "#b2182b"
REFERENCE_COLOR = "#555555"
SHARED_COLOR = "#c51b7d"

# Label priorities (0-10): F0's id first, then the verdict labels, then the other ids. No label is
# forced onto the map: QGIS 3.22 draws a forced label over others, and draws it several times.
TARGET_LABEL_PRIORITY = 10
CONSTRAINT_LABEL_PRIORITY = 8
FEATURE_LABEL_PRIORITY = 5
# Label stacking: F0's id is drawn over every other label, so no verdict label can hide it.
TARGET_LABEL_Z = 10.0
# Verdict sentences wrap at about this many characters so a label stays near its drawing.
LABEL_WRAP_CHARS = 30


def kind_name(kind: str) -> str:
    return {"point": tr("points"), "line": tr("lines"), "polygon": tr("polygons")}[kind]


def text_format(size: float = 9.0, bold: bool = False, color: str = "#111111") -> QgsTextFormat:
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


def label_settings(
    kind: str,
    expression: str,
    size: float = 9.0,
    bold: bool = False,
    priority: int = FEATURE_LABEL_PRIORITY,
    wrap: int = 0,
    z_index: float = 0.0,
) -> QgsPalLayerSettings:
    pal = QgsPalLayerSettings()
    pal.priority = priority
    pal.fieldName = expression
    pal.isExpression = True
    # QGIS's default placement (around a point) places nothing on a line: lines get horizontal
    # labels beside their middle, which also fit a long label on a short line.
    pal.placement = {
        "point": LABEL_AROUND_POINT,
        "line": LABEL_HORIZONTAL,
        "polygon": LABEL_OVER_POINT,
    }[kind]
    pal.dist = 1.0 if kind == "point" else 0.0
    pal.zIndex = z_index
    if wrap:
        pal.autoWrapLength = wrap
    pal.setFormat(text_format(size, bold))
    return pal


def set_labels(layer: QgsVectorLayer, expression: str, kind: str | None = None, **options) -> None:
    geometry = layer.geometryType()
    kind = kind or {GEOM_POINT: "point", GEOM_LINE: "line"}.get(geometry, "polygon")
    layer.setLabeling(QgsVectorLayerSimpleLabeling(label_settings(kind, expression, **options)))
    layer.setLabelsEnabled(True)


def symbol(
    kind: str,
    color: str,
    width: float = 0.6,
    size: float = 2.6,
    fill_alpha: int = 90,
    dashed: bool = False,
    outline: str | None = None,
    hatched: bool = False,
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
            # Hatching: a forbidden zone stays distinct from an allowed one in grey print too.
            "style": "b_diagonal" if hatched else ("solid" if fill_alpha else "no"),
        }
    )


def _marker_line(placement, shape: str, color: str, size: float, interval_mm: float = 0.0):
    layer = QgsMarkerLineSymbolLayer(True, interval_mm or 3.0)
    layer.setPlacement(placement)
    if interval_mm:  # arrows between the end markers, not on them
        layer.setOffsetAlongLine(interval_mm / 2)
    layer.setSubSymbol(
        QgsMarkerSymbol.createSimple(
            {
                "name": shape,
                "color": color,
                "size": str(size),
                "outline_color": "white",
                "outline_width": "0.3",
            }
        )
    )
    return layer


def directed_line_symbol(color: str, width: float):
    """A line with its direction: arrowheads along it, a dot on its first vertex and a square on
    its last (what travelling along a route, or a side of it, is measured from)."""
    sym = symbol("line", color, width=width)
    sym.appendSymbolLayer(_marker_line(LINE_INTERVAL, "filled_arrowhead", color, 3.2, interval_mm=14.0))
    sym.appendSymbolLayer(_marker_line(LINE_FIRST_VERTEX, "circle", color, 3.4))
    sym.appendSymbolLayer(_marker_line(LINE_LAST_VERTEX, "square", color, 3.4))
    return sym
