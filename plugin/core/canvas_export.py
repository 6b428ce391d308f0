"""The canvas as a square PNG through a print layout: the map with a legend of the shown
instance's layers, a scale bar, north arrow text and the OpenStreetMap attribution (the map shows
OSM data, so a shared figure must credit it)."""

from __future__ import annotations

from pathlib import Path

from qgis.core import (
    QgsLayoutExporter,
    QgsLayoutItemLabel,
    QgsLayoutItemLegend,
    QgsLayoutItemMap,
    QgsLayoutItemScaleBar,
    QgsLayoutPoint,
    QgsLayoutSize,
    QgsLegendStyle,
    QgsPrintLayout,
    QgsProject,
    QgsRectangle,
    QgsUnitTypes,
)
from qgis.PyQt.QtGui import QFont

from scoring.errors import SpatialGapError

from ..utils.i18n import tr

EXPORT_DPI = 150
ATTRIBUTION = "© OpenStreetMap contributors (ODbL)"
MARGIN_MM = 6.0


def png_path(path) -> Path:
    """Always a .png (whatever suffix the file dialog left)."""
    path = Path(path)
    return path if path.suffix.lower() == ".png" else path.with_suffix(".png")


def canvas_layout(canvas, size_px: int, title: str = "", legend_layers=None) -> QgsPrintLayout:
    """A square page of size_px at EXPORT_DPI: the canvas's extent squared around its centre, a
    legend (of `legend_layers`, default the visible layers), a scale bar and the attribution."""
    project = QgsProject.instance()
    side = size_px / EXPORT_DPI * 25.4
    layout = QgsPrintLayout(project)
    layout.initializeDefaults()
    page = layout.pageCollection().page(0)
    page.setPageSize(QgsLayoutSize(side, side, QgsUnitTypes.LayoutMillimeters))

    settings = canvas.mapSettings()
    extent = QgsRectangle(settings.visibleExtent())
    half = max(extent.width(), extent.height()) / 2
    centre = extent.center()
    map_item = QgsLayoutItemMap(layout)
    map_item.attemptMove(QgsLayoutPoint(0, 0, QgsUnitTypes.LayoutMillimeters))
    map_item.attemptResize(QgsLayoutSize(side, side, QgsUnitTypes.LayoutMillimeters))
    map_item.setCrs(settings.destinationCrs())
    map_item.setLayers(settings.layers())
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
    legend.setStyleFont(QgsLegendStyle.Title, QFont("Sans Serif", 9, QFont.Bold))
    legend.setStyleFont(QgsLegendStyle.Subgroup, QFont("Sans Serif", 7, QFont.Bold))
    legend.setStyleFont(QgsLegendStyle.SymbolLabel, QFont("Sans Serif", 7))
    legend.setSymbolWidth(5.0)
    legend.setSymbolHeight(3.0)
    legend.attemptMove(QgsLayoutPoint(MARGIN_MM, MARGIN_MM, QgsUnitTypes.LayoutMillimeters))
    layout.addLayoutItem(legend)

    scale = QgsLayoutItemScaleBar(layout)
    scale.setLinkedMap(map_item)
    scale.applyDefaultSize()
    scale.setStyle("Single Box")
    scale.setUnits(QgsUnitTypes.DistanceMeters)
    scale.setBackgroundEnabled(True)
    scale.attemptMove(QgsLayoutPoint(MARGIN_MM, side - MARGIN_MM - 12, QgsUnitTypes.LayoutMillimeters))
    layout.addLayoutItem(scale)

    credit = QgsLayoutItemLabel(layout)
    credit.setText(ATTRIBUTION)
    credit.setFont(QFont("Sans Serif", 8))
    credit.setBackgroundEnabled(True)
    credit.adjustSizeToText()
    size = credit.sizeWithUnits()
    credit.attemptMove(
        QgsLayoutPoint(
            side - MARGIN_MM - size.width(), side - MARGIN_MM - size.height(), QgsUnitTypes.LayoutMillimeters
        )
    )
    layout.addLayoutItem(credit)
    return layout


def export_canvas_layout(canvas, path, size_px: int, title: str = "", legend_layers=None) -> Path:
    out = png_path(path)
    layout = canvas_layout(canvas, size_px, title, legend_layers)
    image = QgsLayoutExporter.ImageExportSettings()
    image.dpi = EXPORT_DPI
    result = QgsLayoutExporter(layout).exportToImage(str(out), image)
    if result != QgsLayoutExporter.Success:
        raise SpatialGapError(tr("cannot write {path}").format(path=out))
    return out
