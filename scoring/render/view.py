"""The square north-up EPSG:3857 view of a map around its scene."""

from __future__ import annotations

from typing import Any

import numpy as np
import shapely

from scoring.constraints.framing import beyond_scene, symmetric_frame
from scoring.formats.records import Instance
from scoring.geometry.georef import PixelTransform, task_to_3857
from scoring.render.features import MapSubject


def compute_view(geoms_3857: list, style: dict[str, Any]) -> tuple[float, float, float]:
    """(x_min, y_max, resolution) of the square EPSG:3857 view around the scene."""
    n = style["image_px"]
    minx, miny, maxx, maxy = shapely.total_bounds(np.array(geoms_3857, dtype=object))
    cx, cy = (minx + maxx) / 2.0, (miny + maxy) / 2.0
    side = max(maxx - minx, maxy - miny) * (1.0 + 2.0 * style["view"]["padding"])
    min_side = style["view"]["min_side_m"] / ground_per_3857(cx, cy)
    side = max(side, min_side)
    res = side / n
    return cx - side / 2.0, cy + side / 2.0, res


def framed_3857(instance: Instance, task_epsg: int) -> tuple[list, list[str]]:
    """The EPSG:3857 geometries a map is framed on besides its scene (scoring.constraints.framing: for an
    edit, the target after the reference edit) and the names of everything framed."""
    extra, what = beyond_scene(instance)
    return [to_3857(g, task_epsg) for g in extra], what


def fix_view(
    subject: MapSubject, instance: Instance, style: dict[str, Any]
) -> tuple[PixelTransform, list[str]]:
    """The map's pixel transform, framed on the scene and what scoring.constraints.framing adds (for an edit,
    the target after the reference edit), and the names of what was framed. Sets each task
    feature's EPSG:3857 and pixel geometry."""
    feats = subject.features
    # every feature in one call each way: PROJ and the affine work point by point, so each
    # geometry comes out as it would alone
    for f, g in zip(feats, to_3857(_array([f.geom_task for f in feats]), subject.task_epsg), strict=True):
        f.geom_3857 = g
    extra, framed = framed_3857(instance, subject.task_epsg)
    scene_3857 = [f.geom_3857 for f in subject.features]
    if extra:  # grown equally on every side, so the frame's centre says nothing of the solution
        bounds = tuple(shapely.total_bounds(_array(scene_3857)))
        extra = [symmetric_frame(bounds, shapely.union_all(_array(extra)))]
    x_min, y_max, res = compute_view(scene_3857 + extra, style)
    n = int(style["image_px"])
    pt = PixelTransform.from_view(x_min, y_max, res, n, n, subject.task_epsg)
    for f, g in zip(feats, pt.geometry_3857_to_pixel(_array([f.geom_3857 for f in feats])), strict=True):
        f.geom_px = g
    return pt, framed


def _array(geoms: list) -> np.ndarray:
    """A 1-d object array of shapely geometries."""
    arr = np.empty(len(geoms), dtype=object)
    arr[:] = geoms
    return arr


def ground_per_3857(x: float, y: float) -> float:
    """Ground metres (east-west, geodesic) per EPSG:3857 metre at (x, y)."""
    return PixelTransform.from_view(x - 0.5, y + 0.5, 1.0, 1, 1, 4326).ground_pixel_size(0.5, 0.5)


def to_3857(geom_task: Any, task_epsg: int) -> Any:
    """A task-CRS geometry in EPSG:3857."""

    def forward(c: np.ndarray) -> np.ndarray:
        x, y = task_to_3857(c[:, 0], c[:, 1], task_epsg)
        return np.column_stack([x, y])

    return shapely.transform(geom_task, forward)
