"""The square north-up EPSG:3857 view of a map around its scene."""

from __future__ import annotations

from typing import Any

import numpy as np
import shapely

from scoring.georef import PixelTransform, task_to_3857


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


def ground_per_3857(x: float, y: float) -> float:
    """Ground metres (east-west, geodesic) per EPSG:3857 metre at (x, y)."""
    return PixelTransform.from_view(x - 0.5, y + 0.5, 1.0, 1, 1, 4326).ground_pixel_size(0.5, 0.5)


def to_3857(geom_task: Any, task_epsg: int) -> Any:
    """A task-CRS geometry in EPSG:3857."""

    def forward(c: np.ndarray) -> np.ndarray:
        x, y = task_to_3857(c[:, 0], c[:, 1], task_epsg)
        return np.column_stack([x, y])

    return shapely.transform(geom_task, forward)
