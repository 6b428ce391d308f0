"""Shapes and the scene builder shared by the hand-built oracle cases (handbuilt_*.py) and
test_oracle_handbuilt.py."""

from __future__ import annotations

import math

from shapely.geometry import LineString, Point, box

from scoring.geometry.georef import CityCRS
from scoring.geometry.scene import Scene, SceneFeature

CRS = CityCRS(epsg=32635, name="x")


def point(x, y):
    return Point(x, y)


def line(*coords):
    return LineString(coords)


def square(x0, y0, x1, y1):
    return box(x0, y0, x1, y1)


def make_scene(feats: dict) -> Scene:
    """feats: id -> geometry, or id -> (geometry, props)."""
    out = []
    for fid, v in feats.items():
        geom, props = v if isinstance(v, tuple) else (v, {})
        kind = {"Point": "poi", "LineString": "road"}.get(geom.geom_type, "building")
        out.append(SceneFeature(fid, kind, geom, dict(props)))
    return Scene(CRS, out)


# A few reusable shapes.
SQ10 = square(0, 0, 10, 10)  # 10 x 10 square, centroid (5, 5)
AREA = square(0, 0, 100, 100)  # 100 x 100 area
EAST_ROAD = line((0, 0), (100, 0))  # runs east: left side is +y
PLAIN = {"bridge": "no", "tunnel": "no"}  # a road with its attributes shown, level 0
T225 = math.tan(math.radians(22.5))  # 0.41421356...: x offset of a 22.5-degree bearing at y = 1
