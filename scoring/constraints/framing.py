"""What a map of an instance must show: its scene and, for an edit, where the target can be put.

An image-only model edits what it sees, so each editing map must contain the target after the
reference edit (the builder's own valid edit). Framing on the scene plus that result would centre
the map between them and so point from the scene towards the solution (issue 29: 175 of 302
off-centre edit frames pointed within 45° of the reference move). Instead the frame is the
scene's bounds grown by the same distance on every side until the reference result fits
(symmetric_frame, applied by the renderer in EPSG:3857, scoring/render/view.py): its centre is
the scene's whatever the solution, and only its size depends on how far the solution lies. The
benchmark manifest records the rule (MAP_FRAME) and each map's sidecar what was framed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shapely.geometry import box
from shapely.geometry.base import BaseGeometry

from scoring.constraints.edits import EditError, apply_edit
from scoring.geometry.scene import Scene

MAP_FRAME: dict[str, Any] = {
    "rule": "square north-up EPSG:3857 view centred on the bounds of the framed geometries, "
    "padded on each side by the style's view.padding and at least view.min_side_m wide; an edit "
    "map's framed geometries are the scene and the scene's bounds (EPSG:3857) grown "
    "by the same distance on every side until it holds the reference edit's result",
    "qa": ["scene"],
    "edit": ["scene", "reference_edit_result"],
    "why": "an image-only model must see where a valid edit puts the target, and the frame's "
    "position must not show where that is",
}


def symmetric_frame(scene_bounds: tuple[float, float, float, float], result: BaseGeometry) -> BaseGeometry:
    """The scene's bounds grown by the same distance on every side, the least that holds `result`
    (any one CRS; the renderer works in EPSG:3857): centred on the scene whatever `result` is."""
    sx0, sy0, sx1, sy1 = scene_bounds
    rx0, ry0, rx1, ry1 = result.bounds
    g = max(0.0, sx0 - rx0, sy0 - ry0, rx1 - sx1, ry1 - sy1)
    return box(sx0 - g, sy0 - g, sx1 + g, sy1 + g)


def beyond_scene(instance: Mapping[str, Any]) -> tuple[list[BaseGeometry], list[str]]:
    """(task-CRS geometries a map must show besides its scene, the names of everything framed)."""
    what = ["scene"]
    edit = instance.get("reference_edit")
    target = str(instance.get("target") or "F0")
    if instance.get("task") != "edit" or not isinstance(edit, dict):
        return [], what
    scene = Scene.from_geojson(instance["scene"])
    if target not in scene:
        return [], what
    try:
        after = apply_edit(scene, target, edit).scene.geom(target)
    except (EditError, ValueError, TypeError):
        return [], what
    if after.is_empty:
        return [], what
    return [after], [*what, "reference_edit_result"]
