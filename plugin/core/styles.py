"""The look of the plugin's layers: colours, symbols and labels shared by the dock and Processing
(no geometry here: shapes come from the scene GeoJSON and scoring.constraints.explain)."""

from __future__ import annotations

from qgis.core import (
    QgsFillSymbol,
    QgsLinePatternFillSymbolLayer,
    QgsLineSymbol,
    QgsMarkerLineSymbolLayer,
    QgsMarkerSymbol,
    QgsPalLayerSettings,
    QgsShapeburstFillSymbolLayer,
    QgsTextBufferSettings,
    QgsTextFormat,
    QgsVectorLayer,
    QgsVectorLayerSimpleLabeling,
)
from qgis.PyQt.QtGui import QColor, QFont

from ..utils.compat import (
    BURST_TWO_COLORS,
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


# Zones are keyed to their constraint's number by hue (#1 purple, #2 blue, ...): two constraints'
# zones never share a colour, and none is the verdicts' green or red or the edited target's
# orange. Where the constraint holds: a band of the hue inside the edge, the middle left clear
# (a 590 m disc no longer tints the whole view); where the target must not go: hatched.
CONSTRAINT_HUES = ("#6a51a3", "#2171b5", "#b8860b", "#138d90", "#8c564b", "#d45fb0", "#636363", "#7f8c1d")


def constraint_hue(number: int) -> str:
    return CONSTRAINT_HUES[(int(number) - 1) % len(CONSTRAINT_HUES)]


def zone_symbol(kind: str, role: str, hue: str):
    """The symbol of an allowed zone ("allowed"), a forbidden one ("forbidden") or a zone's edge
    ("limit") in a constraint's hue."""
    if kind != "polygon":
        dashed = role != "allowed"
        if kind == "line":
            return symbol("line", hue, width=0.9 if role == "forbidden" else 0.6, dashed=dashed)
        return symbol("point", hue, size=2.6, outline="black" if role == "forbidden" else None)
    c = QColor(hue)
    if role == "forbidden":
        sym = QgsFillSymbol.createSimple(
            {"color": f"{c.red()},{c.green()},{c.blue()},40", "outline_color": hue, "outline_width": "0.8"}
        )
        hatch = QgsLinePatternFillSymbolLayer()
        hatch.setLineAngle(45)
        hatch.setDistance(1.8)
        hatch.setLineWidth(0.35)
        hatch.setColor(QColor(hue))
        sym.appendSymbolLayer(hatch)
        return sym
    sym = QgsFillSymbol.createSimple(
        {"color": "0,0,0,0", "outline_color": hue, "outline_width": "0.5", "outline_style": "dash"}
    )
    if role == "allowed":
        band = QgsShapeburstFillSymbolLayer()
        band.setColorType(BURST_TWO_COLORS)
        band.setColor(QColor(c.red(), c.green(), c.blue(), 150))
        band.setColor2(QColor(c.red(), c.green(), c.blue(), 0))
        band.setUseWholeShape(False)
        band.setMaxDistance(2.5)
        sym.insertSymbolLayer(0, band)
    return sym
