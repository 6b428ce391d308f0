"""What a map of an instance must show: its scene and, for an edit, where the target can be put.

An image-only model edits what it sees, so each editing map is framed around the scene AND the
target after the reference edit (the builder's own valid edit): a valid edit's region is then in
the frame. The renderer (scoring/render/view.py) frames every map on these geometries; the
benchmark manifest records the rule (MAP_FRAME) and each map's sidecar what was framed.
"""

from __future__ import annotations

from typing import Any

from shapely.geometry.base import BaseGeometry

from scoring.constraints.edits import EditError, apply_edit
from scoring.geometry.scene import Scene

MAP_FRAME: dict[str, Any] = {
    "rule": "square north-up EPSG:3857 view centred on the bounds of the framed geometries, "
    "padded on each side by the style's view.padding and at least view.min_side_m wide",
    "qa": ["scene"],
    "edit": ["scene", "reference_edit_result"],
    "why": "an image-only model must see where a valid edit puts the target",
}


def beyond_scene(instance: dict[str, Any]) -> tuple[list[BaseGeometry], list[str]]:
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
