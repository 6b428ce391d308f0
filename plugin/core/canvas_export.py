"""The canvas as a square PNG through a print layout: the map with a legend of the shown
instance's layers, a scale bar, north arrow text and the OpenStreetMap attribution (the map shows
OSM data, so a shared figure must credit it)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from qgis.core import (
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


def canvas_layout(canvas, size_px: int, title: str = "", legend_layers=None, key_lines=()) -> QgsPrintLayout:
    """A square page of size_px at EXPORT_DPI: the canvas's extent squared around its centre, a
    legend (of `legend_layers`, default the visible layers), the key panel (`key_lines`: every
    constraint by number, every feature by id, as the map's keys show them), a scale bar and
    the attribution."""
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

    if key_lines:
        layout.addLayoutItem(_key_panel(layout, side, key_lines))

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
    canvas, path, size_px: int, title: str = "", legend_layers=None, key_lines=()
) -> Path:
    out = png_path(path)
    layout = canvas_layout(canvas, size_px, title, legend_layers, key_lines)
    image = QgsLayoutExporter.ImageExportSettings()
    image.dpi = EXPORT_DPI
    result = QgsLayoutExporter(layout).exportToImage(str(out), image)
    if result != QgsLayoutExporter.ExportResult.Success:
        raise SpatialGapError(tr("cannot write {path}").format(path=out))
    return out
