"""The canvas as a square PNG through a print layout: the map with a legend of the shown
instance's layers, a scale bar, north arrow text and the OpenStreetMap attribution (the map shows
OSM data, so a shared figure must credit it)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from qgis.core import (
    QgsCoordinateTransform,
    QgsGeometry,
    QgsLayoutExporter,
    QgsLayoutItemLabel,
    QgsLayoutItemLegend,
    QgsLayoutItemMap,
    QgsLayoutItemScaleBar,
    QgsLayoutPoint,
    QgsLayoutSize,
    QgsLayoutUtils,
    QgsPrintLayout,
    QgsProject,
    QgsRectangle,
)
from qgis.PyQt.QtGui import QFont

from scoring.errors import SpatialGapError

from ..utils.compat import DISTANCE_METERS, LAYOUT_MM, LEGEND_SUBGROUP, LEGEND_SYMBOL_LABEL, LEGEND_TITLE
from ..utils.i18n import tr

EXPORT_DPI = 150
ATTRIBUTION = "© OpenStreetMap contributors (ODbL)"
MARGIN_MM = 6.0


def png_path(path) -> Path:
    """Always a .png (whatever suffix the file dialog left)."""
    path = Path(path)
    return path if path.suffix.lower() == ".png" else path.with_suffix(".png")


def canvas_layout(
    canvas, size_px: int, title: str = "", legend_layers=None, key_lines=(), avoid_layers=()
) -> QgsPrintLayout:
    """A square page of size_px at EXPORT_DPI: the canvas's extent squared around its centre, a
    legend (of `legend_layers`, default the visible layers), the key panel (`key_lines`: every
    constraint by number, every feature by id, as the map's keys show them), a scale bar and
    the attribution. Legend and key panel go to corners where they cover no feature of
    `avoid_layers` (the task's features), the map zoomed out a little where no corner is free."""
    project = QgsProject.instance()
    side = size_px / EXPORT_DPI * 25.4
    layout = QgsPrintLayout(project)
    layout.initializeDefaults()
    page = layout.pageCollection().page(0)
    page.setPageSize(QgsLayoutSize(side, side, LAYOUT_MM))

    settings = canvas.mapSettings()
    extent = QgsRectangle(settings.visibleExtent())
    half = max(extent.width(), extent.height()) / 2
    centre = extent.center()
    map_item = QgsLayoutItemMap(layout)
    map_item.attemptMove(QgsLayoutPoint(0, 0, LAYOUT_MM))
    map_item.attemptResize(QgsLayoutSize(side, side, LAYOUT_MM))
    map_item.setCrs(settings.destinationCrs())
    map_item.setLayers(_tree_order(project, settings.layers()))
    map_item.setExtent(
        QgsRectangle(centre.x() - half, centre.y() - half, centre.x() + half, centre.y() + half)
    )
    map_item.setFrameEnabled(False)
    layout.addLayoutItem(map_item)

    legend = QgsLayoutItemLegend(layout)
    legend.setTitle(title)
    legend.setLinkedMap(map_item)
    legend.setAutoUpdateModel(False)
    root = legend.model().rootGroup()
    root.removeAllChildren()
    for layer in legend_layers if legend_layers is not None else settings.layers():
        root.addLayer(layer)
    legend.setBackgroundEnabled(True)
    legend.setFrameEnabled(True)
    # Small type: the legend must not hide the scene it explains.
    legend.setStyleFont(LEGEND_TITLE, QFont("Sans Serif", 9, QFont.Weight.Bold))
    legend.setStyleFont(LEGEND_SUBGROUP, QFont("Sans Serif", 7, QFont.Weight.Bold))
    legend.setStyleFont(LEGEND_SYMBOL_LABEL, QFont("Sans Serif", 7))
    legend.setSymbolWidth(5.0)
    legend.setSymbolHeight(3.0)
    legend.attemptMove(QgsLayoutPoint(MARGIN_MM, MARGIN_MM, LAYOUT_MM))
    layout.addLayoutItem(legend)
    legend.adjustBoxSize()
    boxes = [legend]
    if key_lines:
        boxes.append(_key_panel(layout, side, key_lines))
        layout.addLayoutItem(boxes[-1])
    _place_clear(map_item, side, boxes, _geometries(avoid_layers, settings.destinationCrs()))

    scale = QgsLayoutItemScaleBar(layout)
    scale.setLinkedMap(map_item)
    scale.applyDefaultSize()
    scale.setStyle("Single Box")
    scale.setUnits(DISTANCE_METERS)
    scale.setBackgroundEnabled(True)
    scale.attemptMove(QgsLayoutPoint(MARGIN_MM, side - MARGIN_MM - 12, LAYOUT_MM))
    layout.addLayoutItem(scale)

    credit = QgsLayoutItemLabel(layout)
    credit.setText(ATTRIBUTION)
    credit.setFont(QFont("Sans Serif", 8))
    credit.setBackgroundEnabled(True)
    credit.adjustSizeToText()
    size = credit.sizeWithUnits()
    credit.attemptMove(
        QgsLayoutPoint(side - MARGIN_MM - size.width(), side - MARGIN_MM - size.height(), LAYOUT_MM)
    )
    layout.addLayoutItem(credit)
    return layout


# Where no corner is free the map zooms out by these factors in turn (the scene shrinks to the
# middle, the corners empty); past the last the corner covering least is taken.
ZOOM_OUT_STEPS = (1.0, 1.15, 1.3, 1.5, 1.75, 2.0)
BOTTOM_BAND_MM = 14.0  # the scale bar and the attribution along the bottom edge


def _geometries(layers, crs) -> list[QgsGeometry]:
    out = []
    for layer in layers:
        to_map = QgsCoordinateTransform(layer.crs(), crs, QgsProject.instance())
        for feature in layer.getFeatures():
            geom = QgsGeometry(feature.geometry())
            if not geom.isEmpty() and geom.transform(to_map) == 0:
                out.append(geom)
    return out


def _corners(side: float, w: float, h: float) -> list[tuple[float, float]]:
    low = side - MARGIN_MM - BOTTOM_BAND_MM - h
    return [
        (MARGIN_MM, MARGIN_MM),
        (side - MARGIN_MM - w, MARGIN_MM),
        (MARGIN_MM, low),
        (side - MARGIN_MM - w, low),
    ]


def _page_to_map(extent: QgsRectangle, side: float, x: float, y: float, w: float, h: float) -> QgsGeometry:
    sx, sy = extent.width() / side, extent.height() / side
    left, top = extent.xMinimum() + x * sx, extent.yMaximum() - y * sy
    return QgsGeometry.fromRect(QgsRectangle(left, top - h * sy, left + w * sx, top))


def _covered(box: QgsGeometry, geoms: list[QgsGeometry]) -> float:
    """How much of the box the features take (their parts inside it: areas, or lengths and points
    counted as a tiny area each, so any feature under a box counts)."""
    total = 0.0
    for geom in geoms:
        if geom.intersects(box):
            part = geom.intersection(box)
            total += max(part.area(), 1e-6 * box.area())
    return total


def _place_clear(map_item, side: float, boxes, geoms: list[QgsGeometry]) -> None:
    """Each box to the first corner it leaves every feature uncovered in (and no other box)."""
    sizes = [(b.sizeWithUnits().width(), b.sizeWithUnits().height()) for b in boxes]
    base = QgsRectangle(map_item.extent())
    best: tuple[float, QgsRectangle, list] | None = None
    for factor in ZOOM_OUT_STEPS:
        extent = QgsRectangle(base)
        extent.scale(factor)
        taken: list[QgsRectangle] = []
        spots, cost = [], 0.0
        for w, h in sizes:
            options = []
            for x, y in _corners(side, w, h):
                page = QgsRectangle(x, y, x + w, y + h)
                if any(page.intersects(t) for t in taken):
                    continue
                options.append((_covered(_page_to_map(extent, side, x, y, w, h), geoms), x, y, page))
            if not options:
                break
            covered, x, y, page = min(options, key=lambda o: o[0])
            taken.append(page)
            spots.append((x, y))
            cost += covered
        if len(spots) < len(boxes):
            continue
        if best is None or cost < best[0]:
            best = (cost, extent, spots)
        if cost == 0.0:
            break
    if best is None:
        return
    map_item.setExtent(best[1])
    for box, (x, y) in zip(boxes, best[2], strict=True):
        box.attemptMove(QgsLayoutPoint(x, y, LAYOUT_MM))


def _key_panel(layout: QgsPrintLayout, side: float, lines) -> QgsLayoutItemLabel:
    """Every constraint and feature by its key, whatever the map's labels could place; lines
    wrapped to the panel's width, the panel sized to them (measured, not guessed)."""
    font = QFont("Sans Serif", 7)
    wrapped = "\n".join(textwrap.fill(line, KEY_PANEL_CHARS, subsequent_indent="   ") for line in lines)
    panel = QgsLayoutItemLabel(layout)
    panel.setText(wrapped)
    panel.setFont(font)
    panel.setBackgroundEnabled(True)
    panel.setFrameEnabled(True)
    margin = 1.5
    panel.setMarginX(margin)
    panel.setMarginY(margin)
    rows = wrapped.split("\n")
    width = max(QgsLayoutUtils.textWidthMM(font, row) for row in rows) + 2 * margin + 1.0
    height = QgsLayoutUtils.textHeightMM(font, wrapped) + 2 * margin + 1.0
    panel.attemptResize(QgsLayoutSize(width, height, LAYOUT_MM))
    panel.attemptMove(QgsLayoutPoint(side - MARGIN_MM - width, MARGIN_MM, LAYOUT_MM))
    panel.setId("key panel")
    return panel


def _tree_order(project: QgsProject, shown: list) -> list:
    """The canvas's layers in the layer tree's drawing order (keys on top of what they name),
    whatever order the canvas received them in."""
    visible = {layer.id() for layer in shown}
    ordered = [layer for layer in project.layerTreeRoot().layerOrder() if layer.id() in visible]
    return ordered + [layer for layer in shown if layer not in ordered]


KEY_PANEL_CHARS = 58  # about 40 % of the page: the legend holds the left


def export_canvas_layout(
    canvas, path, size_px: int, title: str = "", legend_layers=None, key_lines=(), avoid_layers=()
) -> Path:
    out = png_path(path)
    layout = canvas_layout(canvas, size_px, title, legend_layers, key_lines, avoid_layers)
    image = QgsLayoutExporter.ImageExportSettings()
    image.dpi = EXPORT_DPI
    result = QgsLayoutExporter(layout).exportToImage(str(out), image)
    if result != QgsLayoutExporter.ExportResult.Success:
        raise SpatialGapError(tr("cannot write {path}").format(path=out))
    return out
