"""Enum and field-type spellings that work on QGIS 3.22 (Qt 5) up to QGIS 4 (Qt 6).

Each constant is looked up by name, newest spelling first: QGIS moved many enums into `Qgis`
(3.26-3.36) and Qt 6 drops unscoped access, so an old spelling written out in code could fail
to import on one end of the range. tools/qt6_check.py keeps unscoped spellings out of the rest
of the plugin."""

from __future__ import annotations

from qgis.core import Qgis

# QgsField takes QMetaType from QGIS 3.38 on; QVariant's type constants are gone from PyQt6.
QMETATYPE_FIELDS = Qgis.QGIS_VERSION_INT >= 33800


def _lookup(path: str):
    """`qgis.core` attribute path such as "Qgis.LabelPlacement.OverPoint" -> its value."""
    import qgis.core

    obj = qgis.core
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def first(*paths: str):
    """The value of the first path that exists on this QGIS (the last one must exist)."""
    for path in paths[:-1]:
        try:
            return _lookup(path)
        except AttributeError:
            continue
    return _lookup(paths[-1])


def _field_types():
    if QMETATYPE_FIELDS:
        from qgis.PyQt.QtCore import QMetaType

        t = QMetaType.Type
        return t.QString, t.Bool, t.Int, t.LongLong, t.Double
    from qgis.PyQt.QtCore import QVariant

    t = QVariant.Type
    return t.String, t.Bool, t.Int, t.LongLong, t.Double


FIELD_STRING, FIELD_BOOL, FIELD_INT, FIELD_LONGLONG, FIELD_DOUBLE = _field_types()

GEOM_POINT = first("Qgis.GeometryType.Point", "QgsWkbTypes.GeometryType.PointGeometry")
GEOM_LINE = first("Qgis.GeometryType.Line", "QgsWkbTypes.GeometryType.LineGeometry")
GEOM_POLYGON = first("Qgis.GeometryType.Polygon", "QgsWkbTypes.GeometryType.PolygonGeometry")
MSG_INFO = Qgis.MessageLevel.Info
MSG_WARNING = Qgis.MessageLevel.Warning
MSG_CRITICAL = Qgis.MessageLevel.Critical
MSG_SUCCESS = Qgis.MessageLevel.Success

WKB_NONE = first("Qgis.WkbType.NoGeometry", "QgsWkbTypes.Type.NoGeometry")
WKB_MULTIPOINT = first("Qgis.WkbType.MultiPoint", "QgsWkbTypes.Type.MultiPoint")
WKB_MULTILINE = first("Qgis.WkbType.MultiLineString", "QgsWkbTypes.Type.MultiLineString")
WKB_MULTIPOLYGON = first("Qgis.WkbType.MultiPolygon", "QgsWkbTypes.Type.MultiPolygon")

LABEL_AROUND_POINT = first(
    "Qgis.LabelPlacement.OrderedPositionsAroundPoint",
    "QgsPalLayerSettings.Placement.OrderedPositionsAroundPoint",
)
LABEL_HORIZONTAL = first("Qgis.LabelPlacement.Horizontal", "QgsPalLayerSettings.Placement.Horizontal")
LABEL_OVER_POINT = first("Qgis.LabelPlacement.OverPoint", "QgsPalLayerSettings.Placement.OverPoint")

LINE_INTERVAL = first("Qgis.MarkerLinePlacement.Interval", "QgsMarkerLineSymbolLayer.Placement.Interval")
LINE_FIRST_VERTEX = first(
    "Qgis.MarkerLinePlacement.FirstVertex", "QgsMarkerLineSymbolLayer.Placement.FirstVertex"
)
LINE_LAST_VERTEX = first(
    "Qgis.MarkerLinePlacement.LastVertex", "QgsMarkerLineSymbolLayer.Placement.LastVertex"
)

LAYOUT_MM = first("Qgis.LayoutUnit.Millimeters", "QgsUnitTypes.LayoutUnit.LayoutMillimeters")
DISTANCE_METERS = first("Qgis.DistanceUnit.Meters", "QgsUnitTypes.DistanceUnit.DistanceMeters")
LEGEND_TITLE = first("Qgis.LegendComponent.Title", "QgsLegendStyle.Style.Title")
LEGEND_SUBGROUP = first("Qgis.LegendComponent.Subgroup", "QgsLegendStyle.Style.Subgroup")
LEGEND_SYMBOL_LABEL = first("Qgis.LegendComponent.SymbolLabel", "QgsLegendStyle.Style.SymbolLabel")

SOURCE_ANY_GEOMETRY = first(
    "Qgis.ProcessingSourceType.VectorAnyGeometry", "QgsProcessing.SourceType.TypeVectorAnyGeometry"
)
SOURCE_VECTOR = first("Qgis.ProcessingSourceType.Vector", "QgsProcessing.SourceType.TypeVector")
SOURCE_POINT = first("Qgis.ProcessingSourceType.VectorPoint", "QgsProcessing.SourceType.TypeVectorPoint")
SOURCE_LINE = first("Qgis.ProcessingSourceType.VectorLine", "QgsProcessing.SourceType.TypeVectorLine")
SOURCE_POLYGON = first(
    "Qgis.ProcessingSourceType.VectorPolygon", "QgsProcessing.SourceType.TypeVectorPolygon"
)
FILE_BEHAVIOR_FILE = first(
    "Qgis.ProcessingFileParameterBehavior.File", "QgsProcessingParameterFile.Behavior.File"
)
FILE_BEHAVIOR_FOLDER = first(
    "Qgis.ProcessingFileParameterBehavior.Folder", "QgsProcessingParameterFile.Behavior.Folder"
)
NUMBER_INTEGER = first(
    "Qgis.ProcessingNumberParameterType.Integer", "QgsProcessingParameterNumber.Type.Integer"
)


def enum_int(value) -> int:
    """An enum or flag as its integer: PyQt6's enums are Python enums, which int() refuses."""
    return int(getattr(value, "value", value))


BURST_TWO_COLORS = first(
    "Qgis.GradientColorSource.SimpleTwoColor",
    "QgsShapeburstFillSymbolLayer.ShapeburstColorType.SimpleTwoColor",
)
