"""Enum spellings that work on QGIS 3.22 (Qt5, unscoped QGIS enums) and newer 3.x."""

from __future__ import annotations

from qgis.core import Qgis, QgsWkbTypes


def _pick(new_owner: str, new_name: str, old):
    owner = getattr(Qgis, new_owner, None)
    return getattr(owner, new_name, old) if owner is not None else old


GEOM_POINT = _pick("GeometryType", "Point", QgsWkbTypes.PointGeometry)
GEOM_LINE = _pick("GeometryType", "Line", QgsWkbTypes.LineGeometry)
GEOM_POLYGON = _pick("GeometryType", "Polygon", QgsWkbTypes.PolygonGeometry)
MSG_INFO = _pick("MessageLevel", "Info", getattr(Qgis, "Info", 0))
MSG_WARNING = _pick("MessageLevel", "Warning", getattr(Qgis, "Warning", 1))
MSG_CRITICAL = _pick("MessageLevel", "Critical", getattr(Qgis, "Critical", 2))
MSG_SUCCESS = _pick("MessageLevel", "Success", getattr(Qgis, "Success", 3))
